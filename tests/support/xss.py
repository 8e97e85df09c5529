"""Known markdown and HTML injection payloads (markdown2 bypasses among them) and a reader of rendered HTML.

Every payload that could run sets ``window.__pwned`` or opens a dialog, so a browser test can tell.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

PWN = "window.__pwned=1"
CORPUS = (
    f"[x](javascript&#58;{PWN})",  # python-markdown2 #702/#703: an entity hides the colon
    f"[x](javascript:{PWN})",
    f"[x](JaVaScRiPt:{PWN})",
    f"[x](javascript&colon;{PWN})",
    f"[x](&#106;avascript:{PWN})",
    f"[x](&#x6A;avascript:{PWN})",
    f"[x](java\tscript:{PWN})",
    "[x](javascript://%0Aalert(1))",
    "[x](vbscript:msgbox(1))",
    f"[x](<javascript:{PWN}>)",
    f"[ref][j]\n\n[j]: javascript:{PWN}",
    f"<javascript:{PWN}>",
    "[x](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)",
    f"`<img src onerror={PWN}>`",  # python-markdown2 #721: raw HTML inside a code span
    f"``<img src=x onerror={PWN}>``",
    f"<img src=x onerror={PWN}>",
    f"<svg onload={PWN}>",
    f"<svg><script>{PWN}</script></svg>",
    f"<script>{PWN}</script>",
    f"<<script>script>{PWN}<</script>/script>",
    f'<a href="jav&#x09;ascript:{PWN}">x</a>',
    f"<a href='javascript:{PWN}'>x</a>",
    f'<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:{PWN}">x</a>',
    f'<iframe src="javascript:{PWN}"></iframe>',
    f"<details open ontoggle={PWN}>x</details>",
    f"<form action=javascript:{PWN}><button>x</button></form>",
    f"<math><mtext><table><mglyph><style><img src=x onerror={PWN}>",
    f'[a](x" onmouseover="{PWN})',
    f'[a](https://ok.example/" onmouseover="{PWN})',
    f'[x](https://example.com "title" onclick="{PWN}")',
    f'![a" onerror="{PWN}](x)',
    f'![a](x" onerror="{PWN})',
    f"![x](javascript:{PWN})",
    "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    f"[![x](javascript:{PWN})](javascript:{PWN})",
    f"```\n</code></pre><img src=x onerror={PWN}>\n```",
    f"<!--<img src=x onerror={PWN}>-->",
    f"*<img src=x onerror={PWN}>*",
    f"| a |\n|---|\n| <img src=x onerror={PWN}> |",
    f'<http://x.example/?q="><img src=x onerror={PWN}>>',
    "<style>*{display:none}</style>",
    f"<div style=\"background:url('javascript:{PWN}')\">x</div>",
    f"<base href=javascript:{PWN}//>",
    f'<object data="javascript:{PWN}"></object>',
)
DANGEROUS_TAGS = frozenset({"script", "style", "img", "iframe", "svg", "math", "form", "object", "embed", "base"})


class Findings(HTMLParser):
    """Every tag, attribute and URL in an HTML fragment, for assertions about what survived sanitizing."""

    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.urls: list[str] = []
        self.styles: list[str] = []
        self.feed(fragment)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")
            if name in ("href", "src", "action", "data", "formaction", "xlink:href"):
                self.urls.append("".join(html.unescape(value or "").split()).lower())
            if name == "style":
                self.styles.append(value or "")

    @property
    def bad_urls(self) -> list[str]:
        return [u for u in self.urls if u.startswith(("javascript:", "data:", "vbscript:"))]
