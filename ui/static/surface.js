// The surface on every screen size (ui/surface.py), what costs no websocket traffic:
// - skip links: to the latest answer (focused as a region) and to the chat list (its current row; the drawer is
//   opened first on a narrow screen);
// - Esc closes the audit panel while it lies over the chat (below 1400 px) before anything else hears the key;
// - lcSurface.closeOnPhone(id): the server closes the chats drawer after a switch, only where it is an overlay;
// - lcSurface.reveal(text): the chat opened from a search shows the first message holding `text`, marked;
// - lcSurface.chips(): on a phone, the header's model, preset and cost menu opens and closes;
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

  const reveal = (text, tries = 0) => {
    const needle = (text || '').toLowerCase();
    const found = [...document.querySelectorAll('.lc-user, .lc-assistant')]
      .find((el) => el.innerText.toLowerCase().includes(needle));
    if (!found) { if (tries < 40) setTimeout(() => reveal(text, tries + 1), 100); return; }
    found.classList.add('lc-found');
    found.scrollIntoView({ block: 'center' });
    found.dataset.lcFound = '1';
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
