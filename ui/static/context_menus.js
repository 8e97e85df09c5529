// The message box's "/" and "@" menus (ui/context_menus.py): a listbox under the box, driven by the keyboard alone.
// - "/" as the box's first character lists the tool servers' prompts; "@" at a word's start lists their resources
//   and templates; what follows filters them (by name, title, server, description).
// - The box is the combobox: aria-expanded, aria-controls and aria-activedescendant name the listbox and the option
//   the arrows reach (screen readers read it); ArrowDown/ArrowUp move, Enter or Tab choose, Escape closes: while
//   the menu is open these keys never send, stop an answer or leave the box.
// - Choosing removes the typed "/word" or "@word" from the box and tells the server (an 'lcmenu' event on the
//   [data-lc-menus] element): it fetches what was chosen, or asks for its arguments first. An item the server
//   sends as disabled ("Sign in to <server> to use its prompts") is shown and read (aria-disabled), never chosen.
(() => {
  const box = () => document.getElementById('lc-message-box');
  const root = () => document.querySelector('[data-lc-menus]');
  let menu = null;  // {trigger, start, query, items, active}
  let list = null;
  const lists = {};  // trigger -> the items the server sent last

  const tell = (detail) => root()?.dispatchEvent(new CustomEvent('lcmenu', { detail }));

  const typed = (field) => {
    const value = field.value, caret = field.selectionStart ?? value.length;
    if (/^\/\S*$/.test(value.slice(0, caret)) && !/\s/.test(value.slice(0, caret))) {
      return { trigger: '/', start: 0, query: value.slice(1, caret) };
    }
    const at = /(^|\s)@(\S*)$/.exec(value.slice(0, caret));
    return at ? { trigger: '@', start: caret - at[2].length - 1, query: at[2] } : null;
  };

  const matching = () => {
    const words = menu.query.toLowerCase();
    return (lists[menu.trigger] || []).filter((item) => !words || item.search.includes(words));
  };

  const ensureList = () => {
    if (list && document.body.contains(list)) return list;
    list = document.createElement('div');
    list.id = 'lc-menu';
    list.setAttribute('role', 'listbox');
    list.className = 'lc-menu';
    list.addEventListener('mousedown', (e) => {
      const option = e.target.closest('[role=option]');
      if (option) { e.preventDefault(); menu.active = Number(option.dataset.index); choose(); }
    });
    (root() || document.body).appendChild(list);
    return list;
  };

  const render = () => {
    const field = box();
    if (!menu || !field) return;
    const items = matching();
    const host = ensureList();
    host.setAttribute('aria-label', menu.trigger === '/' ? 'Prompts' : 'Resources');
    host.replaceChildren();
    menu.active = Math.min(Math.max(menu.active, 0), Math.max(items.length - 1, 0));
    if (!(menu.trigger in lists)) host.appendChild(Object.assign(document.createElement('div'), { className: 'lc-menu-note', textContent: 'Loading…' }));
    else if (!items.length) host.appendChild(Object.assign(document.createElement('div'), { className: 'lc-menu-note', textContent: menu.trigger === '/' ? 'No prompt matches.' : 'No resource matches.' }));
    items.forEach((item, index) => {
      const option = document.createElement('div');
      option.id = `lc-menu-${index}`;
      option.setAttribute('role', 'option');
      option.setAttribute('aria-selected', String(index === menu.active));
      option.dataset.index = String(index);
      option.dataset.key = item.key;
      option.className = item.disabled ? 'lc-menu-option lc-menu-disabled' : 'lc-menu-option';
      if (item.disabled) option.setAttribute('aria-disabled', 'true');  // a server to sign in to first: said, not chosen
      const name = Object.assign(document.createElement('span'), { className: 'lc-menu-name', textContent: item.label });
      const where = Object.assign(document.createElement('span'), { className: 'lc-meta', textContent: ` ${item.server}` });
      const about = Object.assign(document.createElement('div'), { className: 'lc-meta', textContent: item.description });
      option.append(name, where, about);
      host.appendChild(option);
    });
    field.setAttribute('aria-expanded', 'true');
    field.setAttribute('aria-controls', 'lc-menu');
    field.setAttribute('aria-autocomplete', 'list');
    if (items.length) {
      field.setAttribute('aria-activedescendant', `lc-menu-${menu.active}`);
      host.querySelector(`#lc-menu-${menu.active}`)?.scrollIntoView({ block: 'nearest' });
    } else field.removeAttribute('aria-activedescendant');
  };

  const close = () => {
    menu = null;
    list?.remove();
    const field = box();
    field?.setAttribute('aria-expanded', 'false');
    field?.removeAttribute('aria-activedescendant');
  };

  const choose = () => {
    const field = box();
    const item = matching()[menu.active];
    if (!item || !field || item.disabled) return;
    const caret = field.selectionStart ?? field.value.length;
    const { trigger, start } = menu;
    close();
    field.value = field.value.slice(0, start) + field.value.slice(caret);
    field.setSelectionRange(start, start);
    field.dispatchEvent(new Event('input', { bubbles: true }));  // the server's copy of the box follows
    tell({ kind: 'pick', trigger, key: item.key });
  };

  document.addEventListener('input', (e) => {
    if (e.target !== box()) return;
    const found = typed(e.target);
    if (!found) { if (menu) close(); return; }
    const opening = !menu || menu.trigger !== found.trigger;
    menu = { ...found, active: opening ? 0 : menu.active, items: [] };
    if (opening) tell({ kind: 'open', trigger: found.trigger });
    render();
  }, true);

  window.addEventListener('keydown', (e) => {
    if (!menu || e.target !== box()) return;
    const count = matching().length;
    const moves = { ArrowDown: 1, ArrowUp: -1 };
    if (e.key in moves) menu.active = count ? (menu.active + moves[e.key] + count) % count : 0;
    else if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey && count) choose();
    else if (e.key === 'Escape') close();
    else return;
    e.preventDefault();
    e.stopImmediatePropagation();
    if (menu) render();
  }, true);

  document.addEventListener('focusout', (e) => { if (e.target === box() && menu) setTimeout(() => { if (document.activeElement !== box()) close(); }, 150); });

  window.lcMenus = {
    items: (trigger, items) => {
      lists[trigger] = items.map((item) => ({ ...item, search: `${item.label} ${item.name} ${item.server} ${item.description}`.toLowerCase() }));
      if (menu && menu.trigger === trigger) render();
    },
  };
})();
