// Files on a draft, in the browser: the "Attach files" button opens the real file chooser; a pasted image, a very
// long pasted text (offered as a file: "Attach as a file?") and files dropped on the page (a drop zone shows while
// dragging) are uploaded to POST /files with a progress bar and a cancel button each. The limits rendered into the
// tray (data-max-*) are checked first; the server checks them again. Every step is told to the tray's server side
// as an 'lcfiles' event ({kind: 'refused'|'start'|'done', ...}), which adds the chips and words the sentences.
// Once an image's bytes are sent, its chip says whether it waits for others to be read first (GET /files/queue).
// window.lcFiles.cancel(trayId) aborts a tray's uploads (Stop while uploading).
(() => {
  let seq = 0;
  const running = new Map(); // upload id -> {xhr, tray, size}
  const scopeOf = (node) => (node && node.closest ? node.closest('.lc-tray-scope') : null);
  const trayIn = (scope) => (scope ? scope.querySelector('.lc-tray') : null);
  const mainTray = () => document.querySelector('.lc-tray[data-lc-main-tray]');
  const tell = (tray, detail) => tray.dispatchEvent(new CustomEvent('lcfiles', { detail }));
  const runningIn = (tray) => [...running.values()].filter((u) => u.tray === tray);

  const upload = (tray, file, name) => {
    name = name || file.name || 'file';
    const d = tray.dataset;
    if (file.size > +d.maxFileBytes) return tell(tray, { kind: 'refused', why: 'file', name, size: file.size });
    const mine = runningIn(tray);
    if (+d.usedFiles + mine.length + 1 > +d.maxFiles) return tell(tray, { kind: 'refused', why: 'count', name });
    const total = +d.usedBytes + mine.reduce((n, u) => n + u.size, 0) + file.size;
    if (total > +d.maxMessageBytes) return tell(tray, { kind: 'refused', why: 'message', name, size: total });
    const id = ++seq;
    const chip = document.createElement('div');
    chip.className = 'lc-chip lc-chip-uploading';
    chip.dataset.uploading = name;
    const label = document.createElement('span');
    label.className = 'lc-chip-name';
    label.textContent = name;
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute('aria-label', `Uploading ${name}`);
    const stop = document.createElement('button');
    stop.type = 'button';
    stop.className = 'lc-chip-cancel';
    stop.textContent = '×';
    stop.setAttribute('aria-label', `Cancel upload of ${name}`);
    chip.append(label, bar, stop);
    (tray.querySelector('.lc-pending') || tray).appendChild(chip);
    const xhr = new XMLHttpRequest();
    running.set(id, { xhr, tray, size: file.size });
    stop.addEventListener('click', () => xhr.abort());
    let asking = null; // once an image is sent: how many wait to be read before it (GET /files/queue)
    const queued = async () => {
      try {
        const q = await (await fetch('/files/queue', { cache: 'no-store' })).json();
        label.textContent = q.waiting > 0 ? `${name} · waiting: ${q.waiting} image(s) to read first` : `${name} · reading`;
      } catch (err) { /* the upload's own answer says what went wrong */ }
    };
    if ((file.type || '').startsWith('image/')) {
      xhr.upload.addEventListener('load', () => { queued(); asking = setInterval(queued, 700); });
    }
    const end = (detail) => {
      clearInterval(asking);
      running.delete(id);
      chip.remove();
      tell(tray, { kind: 'done', id, name, ...detail });
    };
    xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) bar.value = (100 * e.loaded) / e.total; });
    xhr.addEventListener('load', () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch (err) { body = null; }
      if (xhr.status === 200 && Array.isArray(body)) end({ ok: true, files: body });
      else end({ ok: false, error: (body && body.error) || `The upload of ${name} was refused (${xhr.status}).` });
    });
    xhr.addEventListener('error', () => end({ ok: false, error: `The upload of ${name} failed: the connection broke.` }));
    xhr.addEventListener('abort', () => end({ ok: false, cancelled: true }));
    tell(tray, { kind: 'start', id, name, size: file.size });
    const form = new FormData();
    form.append('file', file, name);
    xhr.open('POST', '/files');
    xhr.send(form);
  };

  const cancel = (trayId) => {
    for (const u of running.values()) if (!trayId || u.tray.id === trayId) u.xhr.abort();
  };

  const askLongPaste = (tray, target, text) => {
    const scope = scopeOf(tray) || document.body;
    scope.querySelector('.lc-paste-ask')?.remove();
    const box = document.createElement('div');
    box.className = 'lc-paste-ask';
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', 'Attach as a file?');
    const question = document.createElement('span');
    const max = +tray.dataset.maxChars || Infinity; // the message's limit (ui/composer.py): pasted, would it fit?
    const fits = target.value.length - ((target.selectionEnd ?? 0) - (target.selectionStart ?? 0)) + text.length <= max;
    question.textContent = `This paste is ${text.length.toLocaleString()} characters long` + (fits
      ? '. Attach as a file?' : `; a message holds at most ${max.toLocaleString()}. Attach it as a file?`);
    const attach = document.createElement('button');
    attach.type = 'button';
    attach.textContent = 'Attach as a file';
    const asText = document.createElement('button');
    asText.type = 'button';
    asText.textContent = 'Paste as text';
    asText.disabled = !fits;
    if (!fits) asText.title = 'Too long for one message: attach it as a file';
    box.append(question, attach, asText);
    scope.appendChild(box);
    attach.focus();
    attach.addEventListener('click', () => {
      box.remove();
      upload(tray, new File([text], 'pasted text.txt', { type: 'text/plain' }), 'pasted text.txt');
      target.focus();
    });
    asText.addEventListener('click', () => {
      box.remove();
      target.focus();
      // one input event for the whole text (execCommand('insertText') sends one per line: 400 lines, 400 updates)
      const at = target.selectionStart ?? target.value.length;
      target.setRangeText(text, at, target.selectionEnd ?? at, 'end');
      target.dispatchEvent(new Event('input', { bubbles: true }));
    });
    box.addEventListener('keydown', (e) => { if (e.key === 'Escape') { box.remove(); target.focus(); } });
  };

  document.addEventListener('click', (e) => {
    const button = e.target.closest ? e.target.closest('.lc-attach-button') : null;
    if (!button) return;
    const input = scopeOf(button)?.querySelector('input.lc-file-input');
    if (input) input.click(); // within the click: the browser opens its chooser only for a user's gesture
  }, true);

  document.addEventListener('change', (e) => {
    const input = e.target;
    if (!input.classList || !input.classList.contains('lc-file-input')) return;
    const tray = trayIn(scopeOf(input));
    if (tray) for (const file of input.files) upload(tray, file);
    input.value = '';
  });

  document.addEventListener('paste', (e) => {
    const tray = trayIn(scopeOf(e.target));
    const data = e.clipboardData;
    if (!tray || !data) return;
    const files = [...data.files];
    if (files.length) {
      e.preventDefault();
      files.forEach((file, n) => {
        const ext = (file.type.split('/')[1] || 'bin').replace('jpeg', 'jpg');
        const named = file.name && file.name !== `image.${ext}` ? file.name : `pasted image${n ? ` ${n + 1}` : ''}.${ext}`;
        upload(tray, file, named);
      });
      return;
    }
    const text = data.getData('text/plain') || '';
    if (text.length > +tray.dataset.longPaste) {
      e.preventDefault();
      askLongPaste(tray, e.target, text);
    }
  });

  let depth = 0;
  const zone = () => document.getElementById('lc-drop');
  const carriesFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  document.addEventListener('dragenter', (e) => {
    if (!carriesFiles(e) || !mainTray()) return;
    depth += 1;
    if (zone()) zone().hidden = false;
  });
  document.addEventListener('dragleave', (e) => {
    if (!carriesFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (!depth && zone()) zone().hidden = true;
  });
  document.addEventListener('dragover', (e) => { if (carriesFiles(e) && mainTray()) e.preventDefault(); });
  document.addEventListener('drop', (e) => {
    depth = 0;
    if (zone()) zone().hidden = true;
    if (!carriesFiles(e)) return;
    const tray = trayIn(scopeOf(e.target)) || mainTray();
    if (!tray) return;
    e.preventDefault();
    for (const file of e.dataTransfer.files) upload(tray, file);
  });

  window.lcFiles = { cancel, upload };
})();
