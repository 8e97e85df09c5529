// The surface on every screen size (ui/surface.py), what costs no websocket traffic:
// - skip links: to the latest answer (focused as a region) and to the chat list (its current row; the drawer is
//   opened first on a narrow screen);
// - Esc closes the audit panel while it lies over the chat (below 1400 px) before anything else hears the key;
// - lcSurface.closeOnPhone(id): the server closes the chats drawer after a switch, only where it is an overlay;
// - lcSurface.reveal(messageId, words): the chat opened from a search shows the message it found, its words marked;
// - lcSurface.chips(): on a phone, the header's model, preset and cost menu opens and closes;
// - notices below the header: its height as --lc-header-height;
(() => {
  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const auditDrawer = () => document.querySelector('.lc-audit-drawer')?.closest('.q-drawer');
  const auditOverlay = () => {
    const drawer = auditDrawer();
    return !!drawer && !drawer.classList.contains('q-layout--prevent-focus') && visible(drawer)
      && window.innerWidth < 1400;
  };

  const focusLatest = () => {
    const answers = document.querySelectorAll('.lc-assistant');
    const target = answers[answers.length - 1] || document.querySelector('.lc-main');
    if (!target) return;
    target.classList.add('lc-skip-target');
    if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
    target.scrollIntoView({ block: 'start' });
    target.focus({ preventScroll: true });
  };

  const focusList = (tries = 0) => {
    const row = document.querySelector('.lc-chats a[tabindex="0"]') || document.querySelector('.lc-chats a')
      || document.querySelector('[data-lc-new-chat]');
    if (row && visible(row) && !row.closest('.q-layout--prevent-focus')) { row.focus(); return; }
    if (tries === 0) document.querySelector('[data-lc-chats-toggle]')?.click();
    if (tries < 30) setTimeout(() => focusList(tries + 1), 50);
  };

  // the words of a search, marked in the text of one message (its buttons and chips left alone)
  const markWords = (root, words) => {
    const wanted = words.map((w) => w.toLowerCase()).filter(Boolean);
    if (!wanted.length) return;
    const pattern = new RegExp(wanted.sort((a, b) => b.length - a.length)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
    const texts = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (node) => (node.parentElement?.closest('button, .q-btn, mark, .lc-chip, .lc-meta')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    while (walker.nextNode()) texts.push(walker.currentNode);
    for (const node of texts) {
      const text = node.nodeValue;
      pattern.lastIndex = 0;
      if (!pattern.test(text)) continue;
      pattern.lastIndex = 0;
      const pieces = document.createDocumentFragment();
      let at = 0;
      for (const found of text.matchAll(pattern)) {
        pieces.append(text.slice(at, found.index));
        const mark = document.createElement('mark');
        mark.className = 'lc-hit';
        mark.textContent = found[0];
        pieces.append(mark);
        at = found.index + found[0].length;
      }
      pieces.append(text.slice(at));
      node.replaceWith(pieces);
    }
  };

  // a chat opened from a search: the message it found (however long it takes to arrive), in view and marked; the
  // chat stops following its latest answer, and for a moment the view comes back to the match if content arriving
  // around it (the rest of the chat being added above) moved it away
  const reveal = (messageId, words, tries = 0) => {
    const found = document.querySelector(`[data-lc-message="${CSS.escape(messageId)}"]`);
    if (!found) { if (tries < 100) setTimeout(() => reveal(messageId, words, tries + 1), 100); return; }
    window.lcFollow?.stop();
    markWords(found, words || []);
    found.classList.add('lc-found');
    found.dataset.lcFound = '1';
    const mark = found.querySelector('mark.lc-hit') || found;
    mark.scrollIntoView({ block: 'center' });
    const inView = () => { const r = mark.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; };
    const settle = (left) => {
      if (!inView()) { window.lcFollow?.stop(); mark.scrollIntoView({ block: 'center' }); }
      if (left > 0) setTimeout(() => settle(left - 1), 100);
    };
    settle(20);
    setTimeout(() => found.classList.remove('lc-found'), 4000);
  };

  const closeOnPhone = (id) => {
    const drawer = document.querySelector('.lc-chats-drawer')?.closest('.q-drawer');
    if (!drawer || !drawer.classList.contains('q-drawer--mobile')) return;
    try { getElement(id).hide(); } catch (e) { /* the page is being rebuilt */ }
  };

  // the phone's header (ui/header.py): the model, the preset and the cost folded behind one button, opened by it,
  // closed by it, by Esc and by a tap elsewhere (not in a picker's own list, which lies outside the menu)
  const chipsOpen = () => !!document.querySelector('[data-lc-header-chips].lc-open');
  const setChips = (open) => {
    document.querySelector('[data-lc-header-chips]')?.classList.toggle('lc-open', open);
    document.querySelector('.lc-header-more')?.setAttribute('aria-expanded', String(open));
  };
  const chips = () => setChips(!chipsOpen());
  document.addEventListener('click', (event) => {
    const t = event.target;
    if (!chipsOpen() || !t.closest || t.closest('[data-lc-header-chips], .lc-header-more, .q-menu')) return;
    setChips(false);
  }, true);

  window.lcSurface = { closeOnPhone, reveal, focusLatest, focusList, chips };

  // notices sit below the header (surface.css): its height, followed as it changes (a phone's header is another)
  const followHeader = (tries = 0) => {
    const header = document.querySelector('.lc-header');
    if (!header) { if (tries < 100) setTimeout(() => followHeader(tries + 1), 100); return; }
    const set = () => document.documentElement.style.setProperty('--lc-header-height', `${header.offsetHeight}px`);
    new ResizeObserver(set).observe(header);
    set();
  };
  followHeader();

  document.addEventListener('click', (event) => {
    const link = event.target.closest && event.target.closest('a[data-lc-skip]');
    if (!link) return;
    event.preventDefault();
    if (link.dataset.lcSkip === 'latest') focusLatest(); else focusList();
  });
  window.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && chipsOpen() && !document.querySelector('.q-menu')) {
      event.preventDefault();
      event.stopImmediatePropagation();
      setChips(false);
      return;
    }
    if (event.key !== 'Escape' || !auditOverlay()) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    document.querySelector('[data-lc-audit-close]')?.click();
  }, true);
})();
