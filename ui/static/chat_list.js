// The conversation list (ui/chat_list.py): one element for the whole list, rendered as plain HTML — a link per
// chat (so it opens in a new tab with a middle click or Ctrl+click, and its URL can be copied), a Rename and a
// Delete button, a dot while it streams, a heading where the day group changes. The server sends the rows
// (`rows`: [id, title, group, live]) and the chat shown (`current`); every word comes from the server (`words`).
// A plain click on a link asks the server to switch in place ('act' event: ["open", id]); the buttons send
// ["rename", id] and ["delete", id]. On a narrow screen (the list is a drawer over the chat) choosing a chat
// closes the drawer. Titles and ids are text and attribute values only (Vue escapes them).
export default {
  template: `
    <ul class="lc-chats">
      <li v-if="!rows.length" class="lc-chats-empty lc-meta">{{ empty }}</li>
      <template v-for="(row, i) in rows" :key="row[0]">
        <li v-if="row[2] && (i === 0 || rows[i - 1][2] !== row[2])" class="lc-group">{{ row[2] }}</li>
        <li class="lc-chat" :class="{ 'lc-current': row[0] === current }" :data-conversation="row[0]">
          <a :href="'/chat/' + encodeURIComponent(row[0])" :title="row[1]"
             :aria-current="row[0] === current ? 'page' : null" @click="open($event, row[0])"
             ><span class="lc-title">{{ row[1] }}</span></a>
          <span v-if="row[3]" class="lc-live" role="img" :aria-label="words.live" :title="words.live"></span>
          <button type="button" :aria-label="words.rename" :title="words.rename" @click="act('rename', row[0])">
            <span class="material-icons" aria-hidden="true">edit</span>
          </button>
          <button type="button" :aria-label="words.remove" :title="words.remove" @click="act('delete', row[0])">
            <span class="material-icons" aria-hidden="true">delete_outline</span>
          </button>
        </li>
      </template>
    </ul>`,
  props: { rows: Array, current: String, empty: String, words: Object },
  methods: {
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
