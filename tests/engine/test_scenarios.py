"""Scenarios: well-formed data, valid for attention, and each one shows what it claims to."""

import numpy as np
import pytest

from engine import attention, interventions
from engine.dimension import lift
from engine.scenarios import DEFAULT_SCENARIO, SCENARIOS, Scenario, get_scenario

REQUIRED = ("basic", "contest", "bank", "limit", "sharp", "long_context", "null_route")


def run(s: Scenario, *, causal=None, mask=None):
    return attention(
        s.query,
        s.keys,
        s.values,
        mask=s.legal_mask(causal=causal) if mask is None else mask,
        scale=s.scale,
        temperature=s.temperature,
    )


def test_required_scenarios_exist_in_order_with_basic_first():
    assert set(REQUIRED) <= set(SCENARIOS)
    assert next(iter(SCENARIOS)) == DEFAULT_SCENARIO == "basic"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_is_well_formed(name):
    s = get_scenario(name)
    assert s.name == name and name.replace("_", "").isalnum() and name.islower()
    assert s.title and s.demonstrates and len(s.title) <= 60
    n = s.n_keys
    assert s.query.shape == (2,) and s.keys.shape == (n, 2) and s.values.shape == (n, 2)
    assert len(s.labels) == n and len(set(s.labels)) == n  # unique: usable as plot categories
    assert all(0 < len(lab) <= 20 for lab in s.labels)
    assert not s.keys.flags.writeable  # shared data must not be edited in place


@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("causal", [False, True])
def test_every_scenario_runs_through_attention_with_its_extras(name, causal):
    s = get_scenario(name)
    keys, values = s.keys, s.values
    legal = s.legal_mask(causal=causal)
    res = run(s, causal=causal)
    np.testing.assert_allclose(res.weights.sum(), 1.0)
    if s.distractors:
        keys, values, labels = interventions.insert_distractors(
            s.query,
            keys,
            values,
            count=s.distractors,
            norm=s.distractor_norm,
            similarity=s.distractor_similarity,
            seed=0,
        )
        assert not set(labels) & set(s.labels)
        legal = np.concatenate([legal, np.ones(s.distractors, dtype=bool)])
    q, k = lift(s.query, keys, max(s.d_k, 8), seed=0)
    mask = legal
    if s.null_threshold is not None:
        k, values, mask = interventions.null_route(k, values, s.null_threshold, legal=legal)
    res = attention(q, k, values, mask=mask, scale=s.scale, temperature=s.temperature)
    assert np.isfinite(res.output).all()


def test_basic_is_the_seed_configuration():
    s = get_scenario("basic")
    assert s.query.tolist() == [1.0, 0.0]
    assert s.keys.tolist() == [[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]
    assert s.values.tolist() == [[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]]


def test_contest_gives_logits_two_one_zero():
    s = get_scenario("contest")
    res = run(s)
    assert s.scale is False and s.temperature == 1.0
    np.testing.assert_array_equal(res.logits, [2.0, 1.0, 0.0])
    np.testing.assert_allclose(res.weights, [0.665, 0.245, 0.090], atol=5e-4)


def test_bank_routes_approved_to_bank_and_the_twins_are_indistinguishable():
    s = get_scenario("bank")
    w = run(s).weights
    assert s.labels[int(np.argmax(w))] == "bank"
    first, second = s.labels.index("the (1)"), s.labels.index("the (2)")
    assert w[first] == w[second]  # identical keys: the router cannot tell them apart
    hidden = run(s, causal=True).weights
    assert hidden[s.query_position + 1 :].tolist() == [0.0, 0.0]


def test_limit_story():
    s = get_scenario("limit")
    later = s.labels.index("limit (later)")
    approved, temporary = s.labels.index("approved_limit"), s.labels.index("temporary_limit")
    open_route = run(s, causal=False).weights
    causal_route = run(s, causal=True).weights
    assert later > s.query_position and int(np.argmax(open_route)) == later
    assert causal_route[later] == 0.0 and int(np.argmax(causal_route)) == temporary
    assert s.values[temporary][0] == 0.0 and s.values[approved][0] == 5.0  # amount omitted
    # Collapsing the two definition keys makes them indistinguishable to any query.
    collapsed = interventions.replace_key(s.keys, approved, s.keys[temporary])
    w = attention(s.query, collapsed, s.values, mask=s.legal_mask(causal=True)).weights
    assert w[approved] == w[temporary]


def test_sharp_route_is_carried_by_a_long_key():
    s = get_scenario("sharp")
    w = run(s).weights
    winner = int(np.argmax(w))
    assert w[winner] > 0.95 and s.labels[winner] == "long key"
    unit = attention(
        interventions.normalise(s.query),
        interventions.normalise(s.keys),
        s.values,
        scale=s.scale,
        temperature=s.temperature,
    ).weights
    assert unit.max() < 0.7 and s.labels[int(np.argmax(unit))] == "aligned"


def test_long_context_fact_loses_mass_to_its_crowd():
    s = get_scenario("long_context")
    assert s.distractors > 0 and {"fact", "fact (copy)", "old fact", "long key"} <= set(s.labels)
    fact, copy = s.labels.index("fact"), s.labels.index("fact (copy)")
    np.testing.assert_array_equal(s.keys[fact], s.keys[copy])
    np.testing.assert_array_equal(s.values[fact], s.values[copy])
    alone = attention(s.query, s.keys[[fact]], s.values[[fact]]).weights[0]
    crowd = run(s).weights[fact]
    k, v, _ = interventions.insert_distractors(
        s.query,
        s.keys,
        s.values,
        count=s.distractors,
        norm=s.distractor_norm,
        similarity=s.distractor_similarity,
        seed=0,
    )
    with_distractors = attention(s.query, k, v).weights[fact]
    assert alone == 1.0 > crowd > with_distractors
    long_key = s.labels.index("long key")
    assert np.linalg.norm(s.keys[long_key]) > 3 * np.linalg.norm(s.query) / 1.5


def test_null_route_refuses_most_of_the_route():
    s = get_scenario("null_route")
    k, v, bias = interventions.null_route(s.keys, s.values, s.null_threshold)
    w = attention(s.query, k, v, mask=bias, scale=s.scale, temperature=s.temperature).weights
    assert w[-1] > 0.5


def test_unknown_scenario_lists_the_valid_names():
    with pytest.raises(ValueError, match="unknown scenario 'nope'; choose one of: basic, "):
        get_scenario("nope")


def test_legal_mask_combines_legal_and_causal():
    s = Scenario(
        name="t",
        title="t",
        demonstrates="t",
        query=[1, 0],
        keys=[[1, 0]] * 4,
        values=[[1, 0]] * 4,
        labels=("a", "b", "c", "d"),
        legal=(True, False, True, True),
        query_position=2,
    )
    assert s.legal_mask().tolist() == [True, False, True, True]
    assert s.legal_mask(causal=True).tolist() == [True, False, True, False]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"query": [1, 0, 0]}, r"need query \(2,\)"),
        ({"labels": ("a",)}, "1 labels for 2 keys"),
        ({"legal": (False, False)}, "at least one legal key"),
        ({"legal": (True,)}, "legal has 1 entries"),
        ({"query_position": 5}, "query_position outside 0..1"),
        ({"causal": True}, "causal needs a query_position"),
        ({"temperature": 0.0}, "temperature must be finite and > 0"),
        ({"d_k": 1}, "d_k must be >= 2"),
        ({"keys": [[np.nan, 0], [0, 1]]}, "keys must be finite"),
    ],
)
def test_scenario_validation(changes, message):
    base = {
        "name": "t",
        "title": "t",
        "demonstrates": "t",
        "query": [1, 0],
        "keys": [[1, 0], [0, 1]],
        "values": [[1, 0], [0, 1]],
        "labels": ("a", "b"),
    }
    with pytest.raises(ValueError, match=message):
        Scenario(**(base | changes))
