// The streamed text of an answer (ui/markdown_stream.py): the server sends what was added, never what the
// browser already has. A message, lcStream(id, [seq, text added, blocks finished, tail]) or, the whole state,
// lcStream(id, [seq, text, blocks, tail, 1]), is applied in sequence. A block [start, end, parts] is the text's
// [start, end) shown as the HTML its parts make (markup strings, and [from, to] ranges of the block's own text,
// escaped here; parts 0: those the tail holds now; [start, end, parts, keep]: the tail's extended as below). The
// tail [start, end, keep, parts] is the growing block rendered by the server up to `end`: its first `keep` parts
// are the ones already held, then `parts` (keep [n, units]: parts[0] continues held part n's first units). Parts
// arrive packed (`unpacked`: a range as its gap and length, a repeated string as its number, rows that repeat the
// structure of the row before as their cells' lengths). All is set through
// the browser's HTML sanitizer (Element.setHTML) after the server's (nh3). Text after the tail's `end` (the server
// renders a long tail less often) is appended as it is to the tail's last text until the next render. Reasoning
// (`plain`) is plain text, whitespace kept. A message out of sequence (one was lost) asks the server for the whole
// state, once; so does a mount that shows another state than the server's (a re-mount after a reconnect): both by
// the 'sync' event.
const escapeHtml = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"; // ui/tail_render.py DIGITS
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
      for (const [start, end, parts, keep] of blocks || []) this.block(start, end, parts, keep);
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
      const held = this.tail && this.tail.start === start ? this.tail.parts : [];
      this.tail = { start, end, parts: this.extend(held, keep, parts) };
      this.showTail();
    },
    extend(held, keep, packed) {
      // the first `keep` parts held, then `parts`; keep [n, units]: parts[0] continues held[n]'s first units
      const [n, units] = Array.isArray(keep) ? keep : [keep, 0];
      return this.unpacked(packed, held.slice(0, n), units ? held[n].slice(0, units) : "");
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
    unpacked(packed, out, prefix) {
      // ui/tail_render.py packed(), appended to `out` (the parts before; `prefix` begins the first string): a range
      // is [gap from the last range's end, length], or -length (the same gap as the range before); a number >= 0
      // is a string before; [period, lengths] is whole periods that repeat the `period` parts before each (the same
      // strings, ranges with the same gaps) with these lengths (a string: a DIGITS character each): only strings
      // the server sent are ever repeated
      const strings = [];
      let cursor = out.findLast(Array.isArray)?.[1] ?? 0;
      let gap = -1;
      const range = (skip, length) => {
        gap = skip;
        cursor += skip + length;
        out.push([cursor - length, cursor]);
      };
      for (const p of packed) {
        if (typeof p === "string") {
          strings.push(p);
          out.push(prefix + p);
          prefix = "";
        } else if (typeof p === "number") {
          if (p >= 0) out.push(strings[p]);
          else range(gap, -p);
        } else if (typeof p[1] !== "number") {
          const [period, given] = p;
          const lengths = typeof given === "string" ? Array.from(given, (c) => DIGITS.indexOf(c)) : given;
          const ranges = out.slice(-period).filter(Array.isArray).length;
          for (let c = 0, i = 0; ranges && c < (lengths.length / ranges) * period; c++) {
            const from = out.length - period;
            if (typeof out[from] === "string") out.push(out[from]);
            else range(this.gapOf(out, from), lengths[i++]);
          }
        } else range(p[0], p[1]);
      }
      return out;
    },
    gapOf(parts, j) {
      let i = j - 1;
      while (i >= 0 && !Array.isArray(parts[i])) i--;
      return parts[j][0] - (i < 0 ? 0 : parts[i][1]);
    },
    block(start, end, parts, keep) {
      const held = this.tail && this.tail.start === start;
      if (parts === 0) parts = held ? this.tail.parts : [escapeHtml(this.text.slice(start, end))];
      else if (keep === undefined) parts = this.extend([], 0, parts);
      else {
        parts = held ? this.extend(this.tail.parts, keep, parts) : [escapeHtml(this.text.slice(start, end))];
      }
      const div = document.createElement("div");
      div.className = "nicegui-markdown lc-md";
      div.setHTML(this.html(this.text.slice(start, end), parts));
      this.$el.insertBefore(div, this.$refs.tail);
      this.frozen = end;
    },
    touched() {
      // new text is activity: the "waiting for the provider" hint counts from here without a server message
      // (at most twice a second: the hint counts seconds), and the text flowing stills the typing dots (ledger.js
      // lets them move again after a pause): an endless animation keeps the compositor drawing every frame
      const answer = this.$el.closest(".lc-assistant");
      if (!answer || !this.text) return;
      const now = Date.now();
      if (now - (answer.lcTouched || 0) >= 500) {
        answer.lcTouched = now;
        answer.dataset.lastActivity = new Date(now).toISOString();
      }
      answer.classList.add("lc-flowing");
    },
  },
};
