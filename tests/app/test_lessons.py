"""Every lesson step loads, acts on the real state, and measures what its answer claims."""

import re

import numpy as np
import pytest

from app.lessons.lab_lessons import LESSONS, LESSONS_BY_SLUG, PARTS, LessonStep
from app.state.lab_state import LabState
from engine.scenarios import SCENARIOS


def test_the_path_has_four_parts_in_order_and_about_ten_steps():
    assert 8 <= len(LESSONS) <= 12
    parts = [s.part for s in LESSONS]
    assert set(parts) == set(PARTS)
    assert sorted(parts, key=PARTS.index) == parts  # steps follow the parts' order
    assert len(LESSONS_BY_SLUG) == len(LESSONS)  # slugs are unique


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_step_is_well_formed(step: LessonStep):
    assert step.scenario in SCENARIOS
    assert 2 <= len(step.choices) <= 4 and 0 <= step.answer < len(step.choices)
    assert len(set(step.choices)) == len(step.choices)
    for text in (step.title, step.setup, step.question, step.action, step.takeaway):
        assert text.strip() and len(text) < 400
    assert step.is_right(step.answer) and not step.is_right((step.answer + 1) % len(step.choices))


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_step_measurement_on_the_real_state_confirms_the_answer(step: LessonStep):
    lab = LabState()
    lab.temperature = 7.0  # a previous student's fiddling: starting a step must reset it
    before = step.start(lab)
    assert lab.scenario == step.scenario and lab.error == ""
    for name, value in step.settings.items():
        assert getattr(lab, name) == value
    step.act(lab)
    after = lab.snapshot
    assert lab.error == "" and after is not before
    assert step.confirms(before, after)
    text = str(step.measure(before, after))  # a Said: its English
    assert re.search(r"\d", text)
    # Doing nothing must not confirm the claim: the check can fail.
    assert not step.confirms(before, before)


def test_run_returns_before_after_and_the_measurement():
    lab = LabState()
    before, after, text = LESSONS_BY_SLUG["swap-values"].run(lab)
    text = str(text)  # a Said: its English
    assert text.startswith("weights changed by at most 0.0000; output moved by")
    assert before.values[0].tolist() == after.values[2].tolist()


def test_temperature_step_reports_the_same_ranking():
    _, _, text = LESSONS_BY_SLUG["temperature"].run(LabState())
    text = str(text)  # a Said: its English
    assert text.startswith("temperature 1 -> 0.25; ranking unchanged; entropy")


def test_a_step_that_cannot_start_says_so():
    step = LESSONS_BY_SLUG["swap-values"]
    broken = LessonStep(**{**vars(step), "settings": {"temperature": -1.0}})
    with pytest.raises(RuntimeError, match="could not start"):
        broken.start(LabState())


# --------------------------------------------------------------- the student does it by hand


def _hand_swap(lab):
    a, c = list(lab.values[0]), list(lab.values[2])
    lab.set_value(0, *c)  # typed into the pairs editor, one value at a time
    lab.set_value(2, *a)


def _hand_unit_keys(lab):
    for i, (x, y) in enumerate(lab.keys):
        n = (x * x + y * y) ** 0.5
        lab.set_key(i, x / n, y / n)


def _hand_mask_later_words(lab):
    lab.toggle_mask(3)
    lab.toggle_mask(4)


HAND = {
    "swap-values": _hand_swap,
    "rotate-query": lambda lab: setattr(lab, "angle", 86.0),  # a drag lands near, not on, 90
    "length-counts": _hand_unit_keys,
    "local-contest": lambda lab: setattr(lab, "distractors", 40),
    "dimension-unscaled": lambda lab: setattr(lab, "d_k", 256),
    "scale-on": lambda lab: setattr(lab, "scale", True),
    "temperature": lambda lab: setattr(lab, "temperature", 0.2512),  # where the log slider lands
    "causal-mask": _hand_mask_later_words,
    "null-route": lambda lab: setattr(lab, "null_route", True),
    "audit-permute": lambda lab: lab.permute_pairs([1, 0, 2]),  # any reordering, not only reversal
    "why-sharp": lambda lab: setattr(lab, "temperature", 3.981),
}


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_a_student_who_acts_by_hand_is_judged_fairly(step: LessonStep):
    lab = LabState()
    before = step.start(lab)
    HAND[step.slug](lab)
    assert lab.error == ""
    assert step.confirms(before, lab.snapshot), str(step.measure(before, lab.snapshot))


def test_a_quarter_turn_the_wrong_way_does_not_confirm():
    step = LESSONS_BY_SLUG["rotate-query"]
    lab = LabState()
    before = step.start(lab)
    lab.angle = -90.0
    assert not step.confirms(before, lab.snapshot)
    assert "the query turned by -90 degrees" in str(step.measure(before, lab.snapshot))


def test_every_lesson_has_a_hand_path():
    assert set(HAND) == set(LESSONS_BY_SLUG)


# --------------------------------------------------------------- reveals and quoted numbers


def test_the_swap_reveal_moves_the_output_across_the_plane():
    before, after, text = LESSONS_BY_SLUG["swap-values"].run(LabState())
    text = str(text)  # a Said: its English
    moved = float(np.linalg.norm(after.output - before.output))
    assert moved > 5  # on a plane about 24 wide; at temperature 1 it was 0.79
    assert f"output moved by {moved:.2f}" in text


@pytest.mark.parametrize("slug", ["dimension-unscaled", "scale-on"])
def test_a_winner_picked_by_hidden_components_is_named_and_measured(slug):
    before, after, text = LESSONS_BY_SLUG[slug].run(LabState())
    text = str(text)  # a Said: its English
    plane = np.argmax(after.keys @ after.query)
    assert after.winner != plane  # seed 0: B wins on its hidden part while A lines up best
    hidden = after.scores - after.keys @ after.query
    winner, leader = after.labels[after.winner], after.labels[plane]
    assert f"{winner} wins, not {leader}, which lines up best in the plane" in text
    assert f"{hidden[after.winner]:+.1f} to {winner}'s score" in text
    assert f"the {after.d_k - 2} hidden random components" in text


def test_no_hidden_note_when_the_plane_and_the_route_agree():
    _, _, text = LESSONS_BY_SLUG["temperature"].run(LabState())
    text = str(text)  # a Said: its English
    assert "hidden" not in text


def test_numbers_the_lessons_quote_match_the_lab():
    lab = LabState()
    causal = LESSONS_BY_SLUG["causal-mask"]
    causal.start(lab)
    assert f"**Query position** {lab.query_position} " in causal.setup
    assert lab.labels[lab.query_position] == "approved"
    null = LESSONS_BY_SLUG["null-route"]
    null.start(lab)
    assert f"here {lab.null_threshold:g}." in null.question
    assert "zero key would score 0" in null.question
    _, after, text = null.run(lab)
    text = str(text)  # a Said: its English
    assert after.null_logit == lab.null_threshold / lab.temperature
    assert f"at logit {after.null_logit:.1f}" in text
    contest = LESSONS_BY_SLUG["local-contest"].start(lab)
    shares = " / ".join(f"{w:.2f}" for w in contest.weights)
    assert shares in LESSONS_BY_SLUG["local-contest"].setup
    sharp = LESSONS_BY_SLUG["length-counts"].start(lab)
    long_key = sharp.keys[sharp.labels.index("long key")]
    degrees = np.degrees(np.arctan2(long_key[1], long_key[0]))
    assert f"about {degrees:.0f} degrees" in LESSONS_BY_SLUG["length-counts"].setup
    swap = LESSONS_BY_SLUG["swap-values"]
    swap.start(lab)
    assert f"**Temperature τ** is {lab.temperature:g}," in swap.setup


def test_no_negative_zero_in_any_measurement():
    lab = LabState()
    for step in LESSONS:
        _, _, text = step.run(lab)
        text = str(text)  # a Said: its English
        assert not re.search(r"-0\.0+\b(?!\d)", text), (step.slug, text)


def test_more_quoted_numbers_match_the_lab():
    lab = LabState()
    sharp = LESSONS_BY_SLUG["why-sharp"]
    snap = sharp.start(lab)
    assert f"about {snap.weights.max():.2f} of the route at temperature {lab.temperature:g}" in (
        sharp.setup
    )
    scale = LESSONS_BY_SLUG["scale-on"]
    scale.start(lab)
    assert f"sqrt({lab.d_k}), about {lab.d_k**0.5:.1f}" in scale.choices[scale.answer]
    assert f"**d_k** is {lab.d_k}," in scale.setup
    temp = LESSONS_BY_SLUG["temperature"]
    temp.start(lab)
    assert f"at temperature {lab.temperature:g}." in temp.setup
    unscaled = LESSONS_BY_SLUG["dimension-unscaled"]
    unscaled.start(lab)
    assert f"**d_k** is {lab.d_k}." in unscaled.setup and not lab.scale


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_a_step_sets_up_as_one_change(step: LessonStep):
    """A class follower's page redraws once per step: the scenario and the step's own settings
    arrive as one snapshot, the same one two separate changes end on."""
    state = LabState(temperature=0.3, distractors=8)  # somewhere else first
    snapshots = []
    state.param.watch(lambda event: snapshots.append(event.new), "snapshot")
    step.start(state)
    assert len(snapshots) == 1
    apart = LabState()
    apart.load_scenario(step.scenario)
    apart.try_update(**dict(step.settings))
    assert state.to_dict() == apart.to_dict()
    np.testing.assert_array_equal(state.snapshot.weights, apart.snapshot.weights)


def test_a_scenario_with_a_refused_setting_changes_nothing():
    state = LabState(temperature=0.3)
    before = state.snapshot
    state.load_scenario("bank", temperature=-1.0)
    assert state.error and state.temperature == 0.3 and state.snapshot is before
    assert state.scenario != "bank"


def test_the_why_sharp_step_diagnoses_the_sharp_route_it_started_from():
    # It sent the student to "Why is it sharp?" after the temperature was raised to 4, so the
    # diagnosis explained a 41% route. Its verdict now carries the diagnosis of the start.
    step = LESSONS_BY_SLUG["why-sharp"]
    lab = LabState()
    before, after, sentence = step.run(lab)
    sentence = str(sentence)  # a Said: its English
    start = LabState()
    step.start(start)
    sharp, broad = start.diagnose(), lab.diagnose()
    assert sharp.max_weight == pytest.approx(before.weights.max()) and sharp.max_weight > 0.9
    assert broad.max_weight < 0.5  # what the tab would diagnose now: another route
    assert f"holds {sharp.max_weight:.1%}" in sentence
    causes = [f.cause.replace("_", " ") for f in sharp.ranked if f.implicated]
    assert f"strongest first: {', '.join(causes)}" in sentence
    # The sharp route's causes differ from the broad one's: temperature is among them.
    assert "temperature" in causes and "temperature" not in broad.implicated
    assert "**Load this step**" in step.takeaway and "**Why is it sharp?**" in step.takeaway
