"""The repository documents itself: the ledger page names every event kind and every field of each."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ledger.events import EVENT_CLASSES

DOC = Path(__file__).resolve().parents[2] / "docs" / "ledger.md"


def sections() -> dict[str, str]:
    parts = re.split(r"^### `(\w+)`\s*$", DOC.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_ledger_page_describes_every_kind_with_all_its_fields_and_nothing_that_does_not_exist() -> None:
    documented = sections()
    assert sorted(documented) == sorted(cls.KIND for cls in EVENT_CLASSES)
    for cls in EVENT_CLASSES:
        fields = {f.name for f in dataclasses.fields(cls)} - {"seq", "ts", "conversation_id"}
        rows = set(re.findall(r"^\| `(\w+)` \|", documented[cls.KIND], flags=re.MULTILINE))
        assert rows == fields, f"{cls.KIND}: documented {sorted(rows)}, real {sorted(fields)}"
