// The conversation list (ui/chat_list.py): one element for the whole list, rendered as plain HTML — a link per
// chat (so it opens in a new tab with a middle click or Ctrl+click, and its URL can be copied), a Rename and a
// Delete button, a dot while it streams, a heading where the day group changes. The server sends the rows
// (`rows`: [id, title, group, live]) and the chat shown (`current`); every word comes from the server (`words`).
// A plain click on a link asks the server to switch in place ('act' event: ["open", id]); the buttons send
// ["rename", id] and ["delete", id]. The list is one Tab stop (roving tabindex): the arrow keys, Home and End move
// between the chats, F2 renames and Delete deletes the chat focused (the buttons are for the pointer). On a narrow
// screen (the list is a drawer over the chat) choosing a chat closes the drawer. Titles and ids are text and attribute values only (Vue escapes them).
export default {
  template: `
    <div class="lc-chats-wrap">
    <ul class="lc-chats" :aria-describedby="hintId">
      <li v-if="!rows.length" class="lc-chats-empty lc-meta">{{ empty }}</li>
      <template v-for="(row, i) in rows" :key="row[0]">
        <li v-if="row[2] && (i === 0 || rows[i - 1][2] !== row[2])" class="lc-group">{{ row[2] }}</li>
        <li class="lc-chat" :class="{ 'lc-current': row[0] === current }" :data-conversation="row[0]">
          <a :href="'/chat/' + encodeURIComponent(row[0])" :title="row[1]" :tabindex="row[0] === rover ? 0 : -1"
             :aria-current="row[0] === current ? 'page' : null" aria-keyshortcuts="F2 Delete"
             @click="open($event, row[0])" @keydown="key($event, i)" @focus="focused = row[0]"
             ><span class="lc-title">{{ row[1] }}</span></a>
          <span v-if="row[3]" class="lc-live" role="img" :aria-label="words.live" :title="words.live"></span>
          <button type="button" tabindex="-1" :aria-label="words.rename" :title="words.rename"
                  @click="act('rename', row[0])">
            <span class="material-icons" aria-hidden="true">edit</span>
          </button>
          <button type="button" tabindex="-1" :aria-label="words.remove" :title="words.remove"
                  @click="act('delete', row[0])">
            <span class="material-icons" aria-hidden="true">delete_outline</span>
          </button>
        </li>
      </template>
    </ul>
    <span :id="hintId" class="lc-sr-only">{{ words.keys }}</span>
    </div>`,
  props: { rows: Array, current: String, empty: String, words: Object },
  data() {
    return { focused: null, hintId: "lc-chats-keys-" + Math.random().toString(36).slice(2) };
  },
  computed: {
    // the one row the Tab key reaches (roving tabindex): the last one focused, else the chat shown, else the first
    rover() {
      const ids = this.rows.map((r) => r[0]);
      if (ids.includes(this.focused)) return this.focused;
      return ids.includes(this.current) ? this.current : ids[0];
    },
  },
  methods: {
    key(event, i) {
      const moves = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: this.rows.length - 1 };
      if (event.key in moves) {
        event.preventDefault();
        const to = Math.max(0, Math.min(this.rows.length - 1, moves[event.key]));
        this.focused = this.rows[to][0];
        this.$nextTick(() => this.$el.querySelector(`a[tabindex="0"]`)?.focus());
      } else if (event.key === "F2") {
        event.preventDefault();
        this.act("rename", this.rows[i][0]);
      } else if (event.key === "Delete") {
        event.preventDefault();
        this.act("delete", this.rows[i][0]);
      }
    },
    open(event, id) {
      // a middle click, or Ctrl/Cmd/Shift/Alt + click, keeps the browser's own behaviour (a new tab or window)
      if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.act("open", id);
      // on a narrow screen the list is a drawer over the chat: close it so the chat chosen shows
      if (this.$el.closest(".q-drawer--mobile")) this.drawer()?.hide();
    },
    drawer() {
      let c = this.$parent;
      while (c && c.$options.name !== "QDrawer") c = c.$parent;
      return c;
    },
    act(action, id) {
      this.$emit("act", [action, id]);
    },
  },
};
