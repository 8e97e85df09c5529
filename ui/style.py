"""The page's look: a calm light/dark theme, message bubbles, typing dots; and two things done in the browser
because they cost no websocket traffic there: auto-scroll that follows the answer only while the reader is at
the bottom, a "Copy code" button on each code block of an answer, and times shown in the browser's time zone
(elements with ``data-lc-time``, see ``ui.message_view.TimeLabel``)."""

from __future__ import annotations

from nicegui import ui

from ui.safe_markdown import code_css

CSS = """
:root { --lc-muted: #6b7280; --lc-bubble: #eef2ff; --lc-border: #e5e7eb; }
.body--dark { --lc-muted: #9ca3af; --lc-bubble: #1f2937; --lc-border: #374151; }
.lc-header { background: #1e293b; }
.lc-model-badge { font-size: 12px; padding: 2px 8px; border-radius: 999px; background: rgba(255,255,255,.15); }
.lc-meta { color: var(--lc-muted); font-size: 12px; }
.lc-bubble { background: var(--lc-bubble); padding: 8px 12px; border-radius: 14px; }
.lc-assistant .nicegui-markdown p { margin: 0 0 .6em 0; }
.lc-assistant .nicegui-markdown pre { overflow-x: auto; padding: 8px; border-radius: 8px;
  border: 1px solid var(--lc-border); }
.lc-chip { font-size: 12px; padding: 1px 8px; border-radius: 999px; border: 1px solid var(--lc-border); }
.lc-stopped { border-color: #f59e0b; color: #b45309; }
.body--dark .lc-stopped { color: #fbbf24; }
.lc-error { color: #b91c1c; border-left: 3px solid #dc2626; padding-left: 8px; }
.body--dark .lc-error { color: #fca5a5; }
.lc-warning { background: #fef3c7; color: #78350f; }
.lc-danger { background: #fee2e2; color: #7f1d1d; border-left: 4px solid #dc2626; }
.lc-current { background: rgba(99, 102, 241, .12); border-radius: 8px; }
.lc-footer { background: transparent; backdrop-filter: blur(6px); border-top: 1px solid var(--lc-border); }
.body--light .lc-footer { background: rgba(255,255,255,.92); }
.body--dark .lc-footer { background: rgba(18,18,18,.92); }
.lc-typing i { display: inline-block; width: 6px; height: 6px; margin-right: 3px; border-radius: 50%;
  background: var(--lc-muted); animation: lc-blink 1.2s infinite ease-in-out; }
.lc-typing i:nth-child(2) { animation-delay: .2s; } .lc-typing i:nth-child(3) { animation-delay: .4s; }
@keyframes lc-blink { 0%, 80%, 100% { opacity: .2; } 40% { opacity: 1; } }
.lc-assistant pre { position: relative; }
.lc-copy-code { position: absolute; top: 6px; right: 6px; font-size: 11px; padding: 1px 8px; border-radius: 6px;
  border: 1px solid var(--lc-border); background: #fff; color: var(--lc-muted); cursor: pointer; }
.body--dark .lc-copy-code { background: #1d1d1d; }
.lc-timeline { border-left: 2px solid var(--lc-border); margin-left: 8px; padding-left: 0; }
.lc-phase { margin-left: -9px; padding: 3px 0; }
.lc-phase-icon { background: var(--q-primary); color: white; border-radius: 50%; padding: 2px;
  font-size: 12px !important; }
"""

BROWSER_SIDE = """
<script>
(() => {
  // Follow the answer while the reader is at the bottom; stop following once they scroll up.
  let pinned = true;
  const near = () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
  window.addEventListener('scroll', () => { pinned = near(); }, { passive: true });
  // A "Copy code" button on every finished code block of an answer (added here: no websocket traffic).
  const addCopyButtons = () => {
    for (const pre of document.querySelectorAll('.lc-assistant .lc-md pre:not([data-copy])')) {
      pre.dataset.copy = '1';
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'lc-copy-code';
      button.textContent = 'Copy';
      button.setAttribute('aria-label', 'Copy code');
      button.addEventListener('click', () => {
        navigator.clipboard.writeText((pre.querySelector('code') || pre).innerText);
        button.textContent = 'Copied';
        setTimeout(() => { button.textContent = 'Copy'; }, 1200);
      });
      pre.appendChild(button);
    }
  };
  // Times arrive as UTC fallbacks with the instant in data-lc-time: show them in the browser's own time zone.
  const localTimes = () => {
    for (const el of document.querySelectorAll('[data-lc-time]')) {
      const iso = el.dataset.lcTime;
      if (!iso) continue;
      const when = new Date(iso);
      if (isNaN(when)) continue;
      const millis = el.textContent.includes('.');
      const opts = { hour: '2-digit', minute: '2-digit', second: '2-digit' };
      if (millis) opts.fractionalSecondDigits = 3;
      const text = (el.dataset.lcPrefix || '') + when.toLocaleTimeString(undefined, opts);
      if (el.textContent !== text) { el.textContent = text; el.title = when.toLocaleString(); }
    }
  };
  new MutationObserver(() => {
    addCopyButtons();
    localTimes();
    if (pinned) window.scrollTo(0, document.body.scrollHeight);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
})();
</script>
"""


def add_style() -> None:
    ui.add_css(CSS + code_css())
    ui.add_body_html(BROWSER_SIDE)
