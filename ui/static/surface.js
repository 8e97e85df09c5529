// The surface on every screen size (ui/surface.py), what costs no websocket traffic:
// - skip links: to the latest answer (focused as a region) and to the chat list (its current row; the drawer is
//   opened first on a narrow screen);
// - Esc closes the audit panel while it lies over the chat (a phone's full-screen sheet) before anything else
//   hears the key;
// - the audit panel follows the newest answer while its reader is at its end (as the chat does);
// - lcSurface.closeOnPhone(id): the server closes the chats drawer after a switch, only where it is an overlay;
// - lcSurface.auditToggled(open, id, room): the audit panel takes the chat list's place where both do not fit, and
//   gives it back;
// - lcSurface.reveal(messageId, words): the chat opened from a search shows the message it found, its words
//   highlighted (CSS.highlights 'lc-hit');
// - lcSurface.chips(): on a phone, the header's model, preset and cost menu opens and closes;
// - notices below the header: its height as --lc-header-height;
(() => {
  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const auditDrawer = () => document.querySelector('.lc-audit-drawer')?.closest('.q-drawer');
  const auditOverlay = () => {
    const drawer = auditDrawer();
    return !!drawer && !drawer.classList.contains('q-layout--prevent-focus') && visible(drawer)
      && window.innerWidth < 800;
  };

  let auditAtEnd = true;  // the audit panel's reader is at its end: a new answer's card is brought into view
  const auditBox = () => document.querySelector('.lc-audit-drawer');
  document.addEventListener('scroll', (e) => {
    const box = auditBox();
    if (e.target === box) auditAtEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 40;
  }, true);
  const followAudit = () => {
    const box = auditBox();
    if (!box) { setTimeout(followAudit, 200); return; }
    new MutationObserver(() => { if (auditAtEnd) box.scrollTop = box.scrollHeight; })
      .observe(box, { childList: true, subtree: true });
  };
  followAudit();

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

  // the words of a search, highlighted in the text of one message (its answer's markdown or your bubble) with the
  // CSS Custom Highlight API: ranges over the text as it is, so no node the page keeps updating is ever replaced;
  // a new search's highlight replaces the last one
  const highlight = (root, words) => {
    const wanted = words.map((w) => w.toLowerCase()).filter(Boolean);
    const ranges = [];
    if (wanted.length) {
      const pattern = new RegExp(wanted.sort((a, b) => b.length - a.length)
        .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
      for (const block of root.querySelectorAll('.lc-md, .lc-bubble')) {
        const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT, {
          acceptNode: (node) => (node.parentElement?.closest('button')
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
        });
        while (walker.nextNode()) {
          const node = walker.currentNode;
          for (const found of node.nodeValue.matchAll(pattern)) {
            const range = new Range();
            range.setStart(node, found.index);
            range.setEnd(node, found.index + found[0].length);
            ranges.push(range);
          }
        }
      }
    }
    if (window.Highlight && CSS.highlights) CSS.highlights.set('lc-hit', new Highlight(...ranges));
    return ranges;
  };

  // a chat opened from a search: the message it found (however long it takes to arrive), in view, its words
  // highlighted; the chat stops following its latest answer, and for 2 s the view comes back to the match if
  // content arriving around it (the rest of the chat being added above) moved it away, unless the reader scrolled
  let revealing = 0;  // the newest reveal: an older one (another result opened since) stops
  const reveal = (messageId, words, tries = 0, mine = ++revealing) => {
    if (mine !== revealing) return;
    const found = document.querySelector(`[data-lc-message="${CSS.escape(messageId)}"]`);
    if (!found) { if (tries < 100) setTimeout(() => reveal(messageId, words, tries + 1, mine), 100); return; }
    window.lcFollow?.stop();
    const target = highlight(found, words || [])[0] || found;
    found.classList.add('lc-found');
    found.dataset.lcFound = '1';
    const centre = () => {
      const r = target.getBoundingClientRect();
      window.scrollBy({ top: r.top + r.height / 2 - innerHeight / 2 });
    };
    centre();
    let reader = false;  // the reader's own wheel, touch or key ends the holding at once
    const own = () => { reader = true; };
    const events = ['wheel', 'touchstart', 'keydown'];
    for (const name of events) window.addEventListener(name, own, { passive: true, once: true });
    const inView = () => { const r = target.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; };
    const settle = (left) => {
      if (!reader && mine === revealing && found.isConnected) {
        if (!inView()) { window.lcFollow?.stop(); centre(); }
        if (left > 0) { setTimeout(() => settle(left - 1), 100); return; }
      }
      for (const name of events) window.removeEventListener(name, own);
    };
    settle(20);
    setTimeout(() => found.classList.remove('lc-found'), 4000);
  };

  const closeOnPhone = (id) => {
    const drawer = document.querySelector('.lc-chats-drawer')?.closest('.q-drawer');
    if (!drawer || !drawer.classList.contains('q-drawer--mobile')) return;
    try { getElement(id).hide(); } catch (e) { /* the page is being rebuilt */ }
  };

  // the audit panel takes the chat list's place between a phone's width and `room` (CHAT_ROOM, ui/surface.py),
  // and gives it back when it closes, if it took it; the drawers tell the server their state themselves
  // (update:model-value)
  let listTaken = false;
  const auditToggled = (open, id, room) => {
    const drawer = document.querySelector('.lc-chats-drawer')?.closest('.q-drawer');
    const listOpen = !!drawer && !drawer.classList.contains('q-layout--prevent-focus') && visible(drawer);
    try {
      if (open && listOpen && window.innerWidth >= 800 && window.innerWidth < room) {
        getElement(id).hide();
        listTaken = true;
      } else if (!open && listTaken) {
        listTaken = false;
        getElement(id).show();
      }
    } catch (e) { /* the page is being rebuilt */ }
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

  window.lcSurface = { closeOnPhone, auditToggled, reveal, focusLatest, focusList, chips };

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
