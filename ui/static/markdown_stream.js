// The streamed text of an answer (ui/markdown_stream.py): the server sends what was added, never what the
// browser already has. A message is {s: seq, t: text appended, b: [[start, end, parts], ...] blocks finished,
// r: 1 when it is the whole state}. The text is kept here; each finished block [start, end) is shown
// as the HTML its parts make (markup strings, and [start, end] ranges of the block's own text, escaped here),
// through NiceGUI's DOMPurify pass; the rest (the tail) shows as plain text, whitespace kept.
// A message out of sequence (a lost message) asks the server for the whole state once ('resync'); a mount
// tells the server which state it shows ('ready'), so a re-mount after a reconnect is brought up to date.
const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export default {
  template: `<div><div ref="tail" class="lc-tail"></div></div>`,
  props: { init: Object, plain: Boolean },
  mounted() {
    this.full(this.init || { s: 0, t: "", b: [] });
    this.$emit("ready", this.seq);
  },
  methods: {
    apply(m) {
      if (m.r) return this.full(m);
      if (m.s !== this.seq + 1) {
        if (!this.asked) {
          this.asked = true;
          this.$emit("resync", this.seq);
        }
        return;
      }
      this.seq = m.s;
      this.text += m.t;
      if (m.b.length) {
        for (const [start, end, parts] of m.b) this.block(start, end, parts);
        this.showTail();
      } else if (m.t) {
        const added = this.$refs.tail.firstChild ? m.t : m.t.replace(/^\s*\n/, "");
        if (added) this.$refs.tail.appendChild(document.createTextNode(added));
      }
      this.touched();
    },
    full(m) {
      this.seq = m.s;
      this.asked = false;
      this.text = m.t;
      this.frozen = 0;
      for (const old of this.$el.querySelectorAll(":scope > .lc-md")) old.remove();
      for (const [start, end, parts] of m.b) this.block(start, end, parts);
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
      // new text is activity: the "waiting for the provider" hint counts from here without a server round trip
      const answer = this.$el.closest(".lc-assistant");
      if (answer) answer.dataset.lastActivity = new Date().toISOString();
    },
  },
};
