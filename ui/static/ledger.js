// Ledger Chat in the browser: what costs no websocket traffic is done here.
// - scrolling like a chat: follow the answer (and images as they load) while the reader is at the bottom; your own
//   new message always comes into view; a "Jump to latest" button whenever the latest content is out of view (marked when new text
//   arrived below);
// - a "Copy" button on every finished code block; times in the browser's own time zone (data-lc-time);
// - elapsed time of a running tool call (data-lc-since); "waiting for the provider… N s" after a silence; the
//   typing dots move only when no text came for a moment (lc-flowing: the growing text shows the activity);
// - the theme: follows the system until the reader picks one, then remembers it (localStorage);
// - Back/Forward between chats switched in place: the server is told the new path ('lc-route');
// - Ctrl/Cmd+K focuses chat search; announcements for screen readers come from the server (aria-live region).
(() => {
  const THEME_KEY = 'ledger-chat-theme';
  const FLOWING_MS = 1500;  // text came this recently: the typing dots stay still (markdown_stream.js)
  let pinned = true;
  let userCount = 0;
  const near = () => window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 80;
  const jump = () => document.getElementById('lc-jump');
  let ownY = Infinity;  // where our last scroll to the bottom put the page (none yet: any scroll up leaves it)
  const toBottom = () => { window.scrollTo({ top: document.documentElement.scrollHeight }); ownY = window.scrollY; };

  const showJump = (fresh) => {
    const button = jump();
    if (!button) return;
    button.hidden = pinned;
    if (fresh && !pinned) button.classList.add('lc-jump-new');
    if (pinned) button.classList.remove('lc-jump-new');
  };
  // Only the reader unpins: a scroll that leaves the bottom for above where our own scroll put the page. A scroll
  // event is dispatched a frame after its scroll, so the page may have grown meanwhile (an image, the answer's
  // footer): judged by the new height alone, our own scroll to the bottom would read as the reader leaving it.
  window.addEventListener('scroll', () => {
    if (near()) pinned = true;
    else if (window.scrollY < ownY - 1) pinned = false;
    showJump(false);
  }, { passive: true });
  window.addEventListener('resize', () => { if (pinned) toBottom(); }, { passive: true });
  // the page grows without a mutation (an image that loads after it was placed, a late style): follow it too
  new ResizeObserver(() => { if (pinned) toBottom(); }).observe(document.documentElement);
  document.addEventListener('load', (e) => { if (pinned && e.target.tagName === 'IMG') toBottom(); }, true);
  window.lcFollow = { stop: () => { pinned = false; showJump(false); } };  // a search's match stays in view

  const addCopyButtons = () => {
    for (const pre of document.querySelectorAll('.lc-assistant .lc-md:not(.lc-tail) pre:not([data-copy])')) {
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

  const clock = { hour: '2-digit', minute: '2-digit', second: '2-digit' };  // formatters made once, not per time
  const formats = [new Intl.DateTimeFormat(undefined, clock),
    new Intl.DateTimeFormat(undefined, { ...clock, fractionalSecondDigits: 3 })];
  const localTimes = () => {
    for (const el of document.querySelectorAll('[data-lc-time]')) {
      const iso = el.dataset.lcTime;
      if (!iso) continue;
      const when = new Date(iso);
      if (isNaN(when)) continue;
      const text = (el.dataset.lcPrefix || '') + formats[el.textContent.includes('.') ? 1 : 0].format(when);
      if (el.textContent !== text) { el.textContent = text; el.title = when.toLocaleString(); }
    }
  };

  setInterval(() => {
    const now = Date.now();
    for (const el of document.querySelectorAll('[data-lc-since]')) {
      const since = new Date(el.dataset.lcSince);
      if (!isNaN(since)) el.textContent = Math.max(0, Math.round((now - since) / 1000)) + ' s';
    }
    for (const answer of document.querySelectorAll('.lc-assistant[data-status=streaming]')) {
      const hint = answer.querySelector('.lc-waiting');
      const last = new Date(answer.dataset.lastActivity || '');
      if (!hint || isNaN(last)) continue;
      if (now - last >= FLOWING_MS) answer.classList.remove('lc-flowing');  // a pause: the dots move again
      if (answer.querySelector('[data-tool-status=waiting]')) { hint.textContent = ''; continue; }  // waits for you
      const quiet = Math.round((now - last) / 1000);
      const asking = answer.querySelector('[data-question=waiting]');  // a tool's question waits for a person
      hint.textContent = quiet >= 4 && !asking ? `waiting for the provider… ${quiet} s` : '';
    }
  }, 500);

  const nameProgressBars = () => {
    for (const bar of document.querySelectorAll('[role=progressbar]:not([aria-label])')) {
      bar.setAttribute('aria-label', bar.classList.contains('q-loading-bar') ? 'Loading' : 'Progress');
    }
  };
  const inTail = (record) => (record.target.nodeType === 1 ? record.target : record.target.parentElement)
    ?.closest('.lc-tail');
  const observer = new MutationObserver((records) => {
    if (!records.every(inTail)) {  // the growing tail of an answer changes 10 times a second: only scroll for it
      nameProgressBars();
      addCopyButtons();
      localTimes();
      const users = document.querySelectorAll('.lc-user').length;
      if (users > userCount && userCount > 0) pinned = true;  // your own new message: bring it into view
      userCount = users;
    }
    if (pinned) toBottom();
    showJump(true);
  });

  const theme = {
    apply(choice, tries = 0) {
      // NiceGUI's setDark works once its app is mounted: try again until the page shows the choice
      if (typeof setDark === 'function') setDark(choice === 'dark' ? true : choice === 'light' ? false : null);
      const shown = document.body.classList.contains('body--dark') ? 'dark' : 'light';
      if (choice && shown !== choice && tries < 50) setTimeout(() => theme.apply(choice, tries + 1), 100);
    },
    toggle() {
      const dark = document.body.classList.contains('body--dark');
      const choice = dark ? 'light' : 'dark';
      localStorage.setItem(THEME_KEY, choice);
      theme.apply(choice);
    },
  };
  window.lcTheme = theme;

  window.addEventListener('popstate', () => {
    if (typeof emitEvent === 'function') emitEvent('lc-route', window.location.pathname);
  });

  const start = () => {
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    theme.apply(localStorage.getItem(THEME_KEY));
    const button = jump();
    if (button) button.addEventListener('click', () => { pinned = true; toBottom(); showJump(false); });
    document.addEventListener('keydown', (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        document.querySelector('[data-lc-search] input, [data-lc-search]')?.click();
      }
    });
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
