"""One way of naming a head (issue 40): in words "layer 13 head 8" (`engine.head_names.head_name`),
and "L13 H8" (`head_tag`) only as a plot's label, where the view says what it means. A page
named one head both ways, so no module may spell either form by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The one home of both forms; the model card and the trainer's figures key heads "L1H0" in data
# files, not on a page.
OWN = {
    "engine/head_names.py",
    "engine/trained/card.py",
    "engine/trained/train_binding.py",
    "app/i18n/head_words.py",  # head_name's one translated twin (a session's language)
}
BY_HAND = (
    re.compile(r"L\{[^{}]*\} H\{"),  # f"L{layer} H{head}" ("L1H0" keys the card's data)
    re.compile(r"[Ll]ayer \{[^{}]*\},? head \{"),  # f"layer {layer} head {head}"
)
WRITTEN = re.compile(r"\bL\d+ H\d+\b")  # a lesson naming a head in its prose: "L13 H8"


def sources():
    for folder in ("app", "engine"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in OWN:
                yield rel, path.read_text(encoding="utf-8")


@pytest.mark.parametrize("rel", [rel for rel, _ in sources()])
def test_no_module_names_a_head_by_hand(rel):
    text = (ROOT / rel).read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for pattern in BY_HAND + ((WRITTEN,) if rel.startswith("app/lessons/") else ())
        for m in pattern.finditer(text)
    ]
    assert not found, (
        f"{rel} names a head by hand; use engine.head_names.head_name/head_tag: {found}"
    )


def test_the_pattern_catches_both_forms():
    """The test itself can fail: each form, spelled by hand, is caught."""
    for line in ('f"L{r.layer} H{r.head}"', 'f"layer {layer} head {head}"', '"L13 H8 helps"'):
        assert any(p.search(line) for p in (*BY_HAND, WRITTEN)), line
    assert not any(p.search("head_name(layer, head)") for p in BY_HAND)


def test_every_page_text_names_a_head_in_words():
    """What the page writes about a head: the tables, an edit's description, an experiment."""
    from app.state.head_tables import pattern_row_table
    from engine.trained.edits import AblateHead, MaskPosition

    assert AblateHead(1, 4).describe() == "ablate layer 1 head 4"
    assert "every head of layer 2" in MaskPosition(layer=2, head=None, position=0).describe()
    table = pattern_row_table(["a", " b"], [[1.0, 0.0], [0.5, 0.5]], 1, 13, 8)
    assert table.description.startswith("Layer 13 head 8, its row")
