// The streamed text of an answer (ui/markdown_stream.py): the server sends what was added, never what the
// browser already has. A message, lcStream(id, [seq, text added, blocks finished, whole]), is applied in
// sequence; a block [start, end, parts] is the text's [start, end) shown as the HTML its parts make (markup
// strings, and [from, to] ranges of the block's own text, escaped here), through NiceGUI's DOMPurify pass; the
// rest (the tail) shows as plain text, whitespace kept. With `whole` set, the message is the whole state.
// A message out of sequence (one was lost) asks the server for the whole state, once; so does a mount that
// shows another state than the server's (a re-mount after a reconnect): both by the 'sync' event.
const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const streams = (window.lcStreams ??= new Map());
window.lcStream = (id, message) => streams.get(id)?.apply(message);

export default {
  template: `<div><div ref="tail" class="lc-tail"></div></div>`,
  props: { init: Array, plain: Boolean, sid: Number },
  mounted() {
    streams.set(this.sid, this);
    this.whole(this.init || [0, "", []]);
    this.$emit("sync", this.seq);
  },
  beforeUnmount() {
    if (streams.get(this.sid) === this) streams.delete(this.sid);
  },
  methods: {
    apply(m) {
      if (m[3]) return this.whole(m);
      if (m[0] !== this.seq + 1) {
        if (!this.asked) {
          this.asked = true;
          this.$emit("sync", this.seq);
        }
        return;
      }
      const [seq, added, blocks] = m;
      this.seq = seq;
      this.text += added;
      if (blocks && blocks.length) {
        for (const [start, end, parts] of blocks) this.block(start, end, parts);
        this.showTail();
      } else if (added) {
        const shown = this.$refs.tail.firstChild ? added : added.replace(/^\s*\n/, "");
        if (shown) this.$refs.tail.appendChild(document.createTextNode(shown));
      }
      this.touched();
    },
    whole(m) {
      const [seq, text, blocks] = m;
      this.seq = seq;
      this.asked = false;
      this.text = text;
      this.frozen = 0;
      for (const old of this.$el.querySelectorAll(":scope > .lc-md")) old.remove();
      for (const [start, end, parts] of blocks) this.block(start, end, parts);
      this.showTail();
      this.touched();
    },
    showTail() {
      // the blank lines between the last block and the tail are the blocks' margin, not text to show
      this.$refs.tail.textContent = this.text.slice(this.frozen).replace(/^\s*\n/, "");
    },
    block(start, end, parts) {
      const source = this.text.slice(start, end);
      let html = "";
      for (const part of parts) html += typeof part === "string" ? part : escapeHtml(source.slice(part[0], part[1]));
      const div = document.createElement("div");
      div.className = "nicegui-markdown lc-md";
      div.setHTML(html);
      this.$el.insertBefore(div, this.$refs.tail);
      this.frozen = end;
    },
    touched() {
      // new text is activity: the "waiting for the provider" hint counts from here without a server message
      const answer = this.$el.closest(".lc-assistant");
      if (answer && this.text) answer.dataset.lastActivity = new Date().toISOString();
    },
  },
};
