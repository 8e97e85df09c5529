"""The demo model's answers: readable markdown (paragraphs, a list, a code block), different per prompt.

Guarantees: deterministic for a given prompt (the same question gives the same answer), no network, no model.
A prompt that is a list of content parts (a user message with files, as the endpoint hands it on: JSON) is
answered by ``demo.agent.describe_files``: what the demo model can read of each file. A compaction's summary
request (it starts with ``SUMMARY_REQUEST``, the words of ``ledger.compaction``) is answered by a recognisable
summary: "Summary of N earlier messages", then what each user message asked and each answer said (their first
words), in order. A title request (it starts with ``TITLE_REQUEST``, the words of ``ledger.titles``) is answered
by the question's first words that say something, in quotes.
"""

from __future__ import annotations

import hashlib
import random
import re

from demo.agent import content_parts, describe_files, is_file_text

_OPENERS = (
    "Here is how I would think about {topic}.",
    "Good question about {topic}: let me walk through it.",
    "{Topic} is easier to reason about once you split it into parts.",
    "Let's look at {topic} step by step.",
)
_BODY = (
    "The first thing to notice is that every part of {topic} has a cost and a benefit, and the trick is to "
    "make both visible before you decide.",
    "In practice, most problems with {topic} come from hidden state: something changes in one place and "
    "nobody tells the other places that depend on it.",
    "A useful habit is to write down what must stay true about {topic}, then check it after every change "
    "instead of hoping it holds.",
    "When {topic} misbehaves, measure before you guess: a number from a real run beats any amount of theory.",
    "Small, reversible steps make {topic} safer, because each step can be checked and undone on its own.",
)
_POINTS = (
    "Start from the smallest case that still shows the behaviour.",
    "Keep one source of truth and derive everything else from it.",
    "Make failures loud and readable, never silent.",
    "Record what happened, in order, so it can be replayed.",
    "Stop means stop: release what you hold at once.",
    "Prefer plain data that can be inspected over clever objects.",
    "Test the edges: empty input, huge input, and interruptions.",
)
_CLOSERS = (
    "If you want, ask me to expand on any of the points above.",
    "That covers the essentials; the details depend on your constraints.",
    "Try the example and tell me what you see.",
)
_STOP = {
    "now",
    "then",
    "also",
    "more",
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "for",
    "is",
    "are",
    "what",
    "how",
    "why",
    "me",
    "about",
    "tell",
    "please",
    "can",
    "you",
    "i",
    "my",
    "with",
    "explain",
    "give",
    "write",
    "it",
    "do",
}


SUMMARY_REQUEST = "Summarize the earlier conversation below"  # how a compaction's request starts
SUMMARY_PREFIX = "Summary of the earlier conversation"  # how a compacted history's summary message starts


def is_summary_request(prompt: str) -> bool:
    return prompt.startswith(SUMMARY_REQUEST)


def compacted(messages: list[dict[str, object]]) -> bool:
    """Whether a request carries the summary of earlier turns (a system message opening with ``SUMMARY_PREFIX``)."""
    return any(m.get("role") == "system" and str(m.get("content") or "").startswith(SUMMARY_PREFIX) for m in messages)


TITLE_REQUEST = "Write a short title for the conversation below"  # how a title's request starts (ledger.titles)


def is_title_request(prompt: str) -> bool:
    return prompt.startswith(TITLE_REQUEST)


def title_answer(prompt: str) -> str:
    """The demo model's title for the exchange a title request quotes: up to six words of the question from its
    first word that says something (fewer than three: "Chat about" first), capitalized, in quotes (as real models
    often answer: the app removes them)."""
    question = next((line[6:] for line in prompt.splitlines() if line.startswith("user: ")), "")
    question = re.sub(r"#\w+", " ", question)
    words = re.findall(r"[A-Za-z][A-Za-z0-9+#'-]*", question)
    while words and words[0].lower() in _STOP:  # "Tell me about caching in Python" -> "caching in Python"
        words.pop(0)
    words = words[:6]
    while words and words[-1].lower() in _STOP:
        words.pop()
    if 0 < len(words) < 3:  # "caching" -> "Chat about caching": 3 to 6 words, as the request asks
        words = ["Chat", "about", *words]
    title = " ".join(words) if words else "A short chat"
    return f'"{title[:1].upper()}{title[1:]}"'


def summary_answer(prompt: str) -> str:
    """The demo model's summary of the transcript a compaction sent: each user message's first words, in order."""
    lines = prompt.splitlines()[1:]
    earlier = [line for line in lines if line.startswith("system: ")]
    said = sum(1 for line in lines if line.startswith(("user: ", "assistant: ", "tool: ")))
    parts = [f"Summary of {said} earlier messages."]
    if earlier:
        parts.append("It continues an earlier summary.")
    for line in lines:
        role, _, said_text = line.partition(": ")
        if role not in ("user", "assistant") or not said_text.strip():
            continue
        words = re.sub(r"#\w+", "", said_text).split()
        who = "The user asked" if role == "user" else "The assistant answered"
        parts.append(f"- {who}: {' '.join(words[:10])}{'…' if len(words) > 10 else ''}")
    return "\n".join(parts)


def demo_answer(prompt: str, *, paragraphs: int = 3) -> str:
    """A markdown answer about the prompt's topic (or, for content parts, about the files attached)."""
    if is_summary_request(prompt):
        return summary_answer(prompt)
    if is_title_request(prompt):
        return title_answer(prompt)
    attached = content_parts(prompt)
    if attached is not None:
        text = " ".join(str(p.get("text")) for p in attached if p.get("type") == "text" and not is_file_text(p))
        return describe_files(attached) + "\n\n" + demo_answer(text or "these files", paragraphs=1).split("\n\n")[0]
    topic = _topic(prompt)
    rng = random.Random(hashlib.sha256(prompt.encode("utf-8", "replace")).digest())
    parts = [rng.choice(_OPENERS).format(topic=topic, Topic=topic[:1].upper() + topic[1:])]
    body = rng.sample(_BODY, k=min(paragraphs, len(_BODY)))
    parts.append(" ".join(b.format(topic=topic) for b in body[:2]))
    points = rng.sample(_POINTS, k=3)
    parts.append("\n".join(f"{n}. **{p.split(':')[0]}**" for n, p in enumerate(points, start=1)))
    for extra in body[2:]:
        parts.append(extra.format(topic=topic))
    name = re.sub(r"\W+", "_", topic).strip("_").lower() or "example"
    parts.append(
        "```python\n"
        f"def check_{name[:24]}(items):\n"
        '    """Return the items that break the rule, so they can be shown."""\n'
        "    return [item for item in items if not item.ok]\n"
        "```"
    )
    parts.append(rng.choice(_CLOSERS))
    return "\n\n".join(parts)


def _topic(prompt: str) -> str:
    prompt = re.sub(r"#\w+", " ", prompt)  # fault tags are instructions to the demo, not the topic
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*", prompt) if w.lower() not in _STOP]
    return " ".join(words[:3]).lower() if words else "this"
