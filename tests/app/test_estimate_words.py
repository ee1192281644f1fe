"""The attribution notes in plain words: each engine reason is recognised with its number."""

from __future__ import annotations

from app.state.estimate_words import reasons, sentence_warning, short
from engine import trained
from engine.trained import attribution


def test_each_reason_is_said_with_its_measurement():
    note = (
        "saturated: P(answer) = 0.999, where log P is nearly flat; large step: 0.45 of the "
        "residual stream it changes; later layers may repair or amplify it; cancelling: the "
        "positions' terms sum to 0.20 of their total"
    )
    said = reasons(note)
    assert len(said) == 3  # the large step's own "; " does not start a reason
    assert "99.9000%" in said[0] and "45%" in said[1] and "20%" in said[2]
    assert reasons(None) == [] and short(None) == ""
    assert short(note) == "saturated, large step, cancelling"
    assert reasons(note, leave_out=("saturated",)) == said[1:]


def test_a_saturated_sentence_is_warned_once_with_the_digits_that_matter():
    assert "99.9900%" in sentence_warning(0.9999) and sentence_warning(0.5) == ""


def test_the_engines_notes_are_the_ones_recognised():
    amap = trained.load("binding").attribution_map("a=5; b=7; a=3; ?a", verify=0)
    notes = [r.note for r in amap.records if r.note]
    assert notes
    for note in notes:
        for said in reasons(note):
            assert not said.startswith(("saturated:", "large step:", "cancelling:")), said
    assert attribution.SATURATED_P <= amap.prob


def test_terms_that_cancel_to_almost_nothing_are_said_to_leave_under_one_percent():
    # Rounded, "0% of their total" read as if nothing at all were left.
    said = reasons("cancelling: the positions' terms sum to 0.00 of their total")
    assert said and "under 1%" in said[0] and "0%" not in said[0].replace("under 1%", "")
    assert "1%" in reasons("cancelling: the positions' terms sum to 0.01 of their total")[0]
