// The streamed text of an answer (ui/markdown_stream.py): the server sends what was added, never what the
// browser already has. A message, lcStream(id, [seq, text added, blocks finished, tail]) or, the whole state,
// lcStream(id, [seq, text, blocks, tail, 1]), is applied in sequence. A block [start, end, parts] is the text's
// [start, end) shown as the HTML its parts make (markup strings, and [from, to] ranges of the block's own text,
// escaped here; parts 0: those the tail holds now). The tail [start, end, keep, parts] is the growing block
// rendered by the server up to `end`: its first `keep` parts are the ones already held, then `parts`. All is set
// through the browser's HTML sanitizer (Element.setHTML) after the server's (nh3). Text after the tail's `end`
// (the server renders a long tail less often) is appended as it is to the tail's last text until the next
// render. Reasoning (`plain`) is plain text, whitespace kept. A message out of sequence (one was lost) asks the
// server for the whole state, once; so does a mount that shows another state than the server's (a re-mount
// after a reconnect): both by the 'sync' event.
const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const VOID = new Set(["BR", "HR", "INPUT"]);
const streams = (window.lcStreams ??= new Map());
window.lcStream = (id, message) => streams.get(id)?.apply(message);

export default {
  template: `<div><div ref="tail" class="lc-tail"></div></div>`,
  props: { init: Array, plain: Boolean, sid: Number },
  mounted() {
    streams.set(this.sid, this);
    if (!this.plain) this.$refs.tail.classList.add("nicegui-markdown", "lc-md"); // laid out as its block will be
    this.whole(this.init || [0, "", [], null]);
    this.$emit("sync", this.seq);
  },
  beforeUnmount() {
    if (streams.get(this.sid) === this) streams.delete(this.sid);
  },
  methods: {
    apply(m) {
      if (m[4]) return this.whole(m);
      if (m[0] !== this.seq + 1) {
        if (!this.asked) {
          this.asked = true;
          this.$emit("sync", this.seq);
        }
        return;
      }
      const [seq, added, blocks, tail] = m;
      this.seq = seq;
      this.text += added;
      for (const [start, end, parts] of blocks || []) this.block(start, end, parts);
      if (tail) this.setTail(tail);
      else if (blocks && blocks.length) this.showTail();
      else if (added) this.appendRaw(added);
      this.touched();
    },
    whole(m) {
      const [seq, text, blocks, tail] = m;
      this.seq = seq;
      this.asked = false;
      this.text = text;
      this.frozen = 0;
      this.tail = null;
      for (const old of this.$el.querySelectorAll(":scope > .lc-md:not(.lc-tail)")) old.remove();
      for (const [start, end, parts] of blocks) this.block(start, end, parts);
      if (tail) this.setTail(tail);
      else this.showTail();
      this.touched();
    },
    html(source, parts) {
      let html = "";
      for (const part of parts) html += typeof part === "string" ? part : escapeHtml(source.slice(part[0], part[1]));
      return html;
    },
    setTail([start, end, keep, parts]) {
      const held = this.tail && this.tail.start === start ? this.tail.parts.slice(0, keep) : [];
      this.tail = { start, end, parts: held.concat(parts) };
      this.showTail();
    },
    showTail() {
      const el = this.$refs.tail;
      const t = this.tail;
      if (t && t.start >= this.frozen) {
        el.setHTML(this.html(this.text.slice(t.start), t.parts));
        this.appendRaw(this.text.slice(t.end));
      } else {
        // the blank lines between the last block and the tail are the blocks' margin, not text to show
        el.textContent = this.text.slice(this.frozen).replace(/^\s*\n/, "");
      }
    },
    appendRaw(text) {
      // text the server has not rendered yet goes, as it is, at the end of the deepest last element
      let at = this.$refs.tail;
      if (!this.plain) while (at.lastChild && at.lastChild.nodeType === 1 && !VOID.has(at.lastChild.tagName)) at = at.lastChild;
      const shown = this.$refs.tail.firstChild ? text : text.replace(/^\s*\n/, "");
      if (shown) at.appendChild(document.createTextNode(shown));
    },
    block(start, end, parts) {
      if (parts === 0) {
        const held = this.tail && this.tail.start === start;
        parts = held ? this.tail.parts : [escapeHtml(this.text.slice(start, end))];
      }
      const div = document.createElement("div");
      div.className = "nicegui-markdown lc-md";
      div.setHTML(this.html(this.text.slice(start, end), parts));
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
