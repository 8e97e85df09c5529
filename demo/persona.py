"""The demo model follows the instructions it can check offline: the system message of a request (an agent
preset's instructions) may give it a persona's name and a language.

Guarantees: deterministic, no network. With "You are <Name>" (or "Your name is <Name>") in a system message the
answer starts by introducing itself by that name; with "answer in French" (or "réponds en français") the whole
answer is in French (a French answer about the question's topic, with the same shape: paragraphs, a list, a code
block), and the introduction too. A request without a system message is answered exactly as before.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Any

NAME = re.compile(r"\b(?:you are|your name is|tu es|vous êtes)\s+([A-Z][\w'-]{0,30})", re.IGNORECASE)
FRENCH = re.compile(r"(?:in french|en français|en francais)", re.IGNORECASE)
_FR_OPENERS = (
    "Voici comment je vois la question « {topic} ».",
    "Bonne question sur « {topic} » : prenons-la pas à pas.",
    "« {topic} » devient plus simple quand on la découpe en morceaux.",
)
_FR_BODY = (
    "D'abord, chaque partie a un coût et un bénéfice : il faut rendre les deux visibles avant de décider.",
    "En pratique, la plupart des soucis viennent d'un état caché : quelque chose change à un endroit et personne "
    "ne prévient les autres endroits qui en dépendent.",
    "Une bonne habitude consiste à écrire ce qui doit rester vrai, puis à le vérifier après chaque changement.",
    "Quand quelque chose se comporte mal, mesurez avant de deviner : un chiffre réel vaut mieux que la théorie.",
)
_FR_POINTS = (
    "Commencer par le plus petit cas qui montre le problème.",
    "Garder une seule source de vérité.",
    "Rendre les erreurs lisibles, jamais silencieuses.",
    "Tout enregistrer, dans l'ordre, pour pouvoir rejouer.",
    "Arrêter veut dire arrêter : tout libérer tout de suite.",
)


def instructions_of(messages: list[dict[str, Any]]) -> str:
    """Every system message's text, joined (what an agent preset told the model)."""
    texts = []
    for message in messages:
        if message.get("role") == "system":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            texts.append(str(content or ""))
    return "\n".join(texts)


def follow(messages: list[dict[str, Any]], answer: str, prompt: str) -> str:
    """``answer`` as the instructions of ``messages`` want it (unchanged without any)."""
    told = instructions_of(messages)
    if not told.strip():
        return answer
    name = NAME.search(told)
    french = FRENCH.search(told) is not None
    if french:
        answer = french_answer(prompt)
    if name is None:
        return answer
    hello = f"Bonjour, je suis {name.group(1)}." if french else f"Hello, I am {name.group(1)}."
    return f"{hello}\n\n{answer}"


def french_answer(prompt: str) -> str:
    topic = " ".join(re.findall(r"[^\W\d_][\w'-]*", re.sub(r"#\w+", " ", prompt))[:4]).lower() or "cela"
    rng = random.Random(hashlib.sha256(prompt.encode("utf-8", "replace")).digest())
    parts = [rng.choice(_FR_OPENERS).format(topic=topic), " ".join(rng.sample(_FR_BODY, k=2))]
    parts.append("\n".join(f"{n}. **{p}**" for n, p in enumerate(rng.sample(_FR_POINTS, k=3), start=1)))
    parts.append(" ".join(rng.sample(_FR_BODY, k=2)))
    parts.append(
        '```python\ndef verifier(elements):\n    """Les éléments qui cassent la règle."""\n'
        "    return [e for e in elements if not e.ok]\n```"
    )
    parts.append("Dites-moi si vous voulez que je développe un de ces points.")
    return "\n\n".join(parts)
