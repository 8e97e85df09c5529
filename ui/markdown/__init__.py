"""Markdown, safely: untrusted model, tool and file text rendered to HTML that loads nothing remote (``safe``, via
markdown-it and ``nh3``), with math (``math``), code and tables; a streaming answer's stable blocks rendered once
and cached (``cache``, ``stream``) and its live tail closed and rendered on its own (``closing``, ``tail``);
``render`` is one whole text's safe HTML (a share link's plain page, ``ui.share_html``).

Guarantees: the same text renders the same HTML streamed or whole; nothing here reads the engine or the ledger.
"""

from __future__ import annotations

from ui.markdown.safe import code_css, render
from ui.markdown.stream import MarkdownStream

__all__ = ["MarkdownStream", "code_css", "render"]
