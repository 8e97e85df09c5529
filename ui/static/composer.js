// The message box's Send/Stop button and Enter in the browser (ui/composer.py): what must hold before the server
// has answered a press.
// - Send reads as disabled while the box is empty and no file is attached (decided here, so it holds before the
//   socket is live); a press anyway is explained by the server.
// - A press carries the box's text and how many of this page's sends were recorded when it was made (the button's
//   data-lc-sends): the server ignores a press made on a view older than its last recorded send (a second Enter
//   while the first one's clearing of the box is still on its way), so a message is never sent twice.
// - Before the page's connection is live a press is held here, once (more presses add nothing), and goes out only
//   after the box's own updates that were queued before it. NiceGUI retries each queued event on its own 10 ms
//   timer, so they would otherwise leave in any order: the server could record the Send, clear the box, and then
//   receive the box's text again, refilling it for a second Enter to send again.
// - Stop is armed only data-lc-guard-ms after it shows: until then it reads as disabled (aria-disabled, lc-arming)
//   and a press on it is ignored, so a press meant for Send (a double click, or a second press made on the view
//   before) never stops the answer it just started. Enter never stops; Esc stops at once (a deliberate key).
(() => {
  const FLUSHED_MS = 50;  // > NiceGUI's 10 ms retry: every timer set before this one fires first (HTML timers)
  const button = () => document.querySelector('[data-lc-send]');
  const box = () => document.getElementById('lc-message-box');
  const label = (b) => b?.querySelector('.block')?.textContent?.trim();
  let held = false;
  let stopShownAt = null;  // performance.now() when the button last came to read Stop
  let armTimer = null;

  const arming = () => stopShownAt !== null
    && performance.now() - stopShownAt < Number(button()?.dataset.lcGuardMs || 0);

  // Send reads as disabled (aria-disabled) while the box is empty and no file is attached; Stop while it arms
  const sync = () => {
    const b = button();
    const field = box();
    if (!b || !field) return;
    const stop = label(b) === 'Stop';
    if (stop && stopShownAt === null) {
      stopShownAt = performance.now();
      clearTimeout(armTimer);
      armTimer = setTimeout(sync, Number(b.dataset.lcGuardMs || 0) + 10);
    } else if (!stop) {
      stopShownAt = null;
    }
    const armed = !arming();
    b.classList.toggle('lc-arming', stop && !armed);
    if (b.disabled) return;  // disabled by the server (a send in flight): its own state
    const empty = label(b) === 'Send' && !field.value.trim() && !document.querySelector('.lc-footer .lc-chip');
    const off = empty || (stop && !armed);
    if (off !== (b.getAttribute('aria-disabled') === 'true')) {
      if (off) b.setAttribute('aria-disabled', 'true'); else b.removeAttribute('aria-disabled');
    }
  };
  document.addEventListener('input', sync, true);
  const watchFooter = () => {
    const footer = document.querySelector('.lc-footer');
    if (!footer) { setTimeout(watchFooter, 100); return; }
    new MutationObserver(sync).observe(footer, { childList: true, subtree: true, characterData: true,
      attributes: true, attributeFilter: ['aria-disabled', 'value', 'disabled'] });
    sync();
  };
  watchFooter();

  // what a press sends: the box's text and the sends this view had seen recorded
  const press = (emit, event) => {
    const b = button();
    if (event?.type === 'click' && label(b) === 'Stop' && arming()) return;  // Stop not armed yet
    const said = { text: box()?.value ?? null, sends: Number(b?.dataset.lcSends ?? -1) };
    keep(location.pathname, '');  // a press forgets the draft (a reload after it never sends it again); a refused
    // send keeps it again (lcDraft.kept, ui/composer.py)
    if (window.did_handshake) { emit(said); return; }
    if (held) return;  // a press already waits for the connection
    held = true;
    b?.classList.add('lc-held');
    const go = () => {
      if (!window.did_handshake) { setTimeout(go, 10); return; }
      setTimeout(() => { held = false; button()?.classList.remove('lc-held'); emit(said); }, FLUSHED_MS);
    };
    go();
  };

  window.lcComposer = { press };

  // A draft survives a reload: the box's text is kept in this browser per chat (localStorage, 'lc-draft:' + the
  // chat's path) as it is typed, put back into an empty box once the page's connection is live (so it reaches the
  // server as typing would), forgotten when Send or Enter is pressed and kept again if the server refused the send.
  const draftKey = (path) => 'lc-draft:' + path;
  const keep = (path, text) => {
    try { if (text) localStorage.setItem(draftKey(path), text); else localStorage.removeItem(draftKey(path)); }
    catch { /* storage full or off: the draft lives as long as the page */ }
  };
  document.addEventListener('input', (e) => { if (e.target === box()) keep(location.pathname, e.target.value); });
  window.lcDraft = {
    kept: () => { const field = box(); if (field) keep(location.pathname, field.value); },
    forget: (path) => keep(path, ''),  // a deleted chat's draft goes with it
  };
  const restore = () => {
    if (!window.did_handshake) { setTimeout(restore, 50); return; }
    const field = box();  // a page without the message box (the presets page) has no draft
    if (!field) return;
    let saved = null;
    try { saved = localStorage.getItem(draftKey(location.pathname)); } catch { return; }
    if (saved && !field.value) {
      field.value = saved;
      field.dispatchEvent(new Event('input', { bubbles: true }));
    }
  };
  restore();
})();
