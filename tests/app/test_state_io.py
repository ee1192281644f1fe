"""JSON export and import: an exact round trip, and every kind of bad import refused whole."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.state import settings_schema
from app.state.lab_state import FIELDS, LabState


def _edited():
    lab = LabState(scenario="bank")
    lab.param.update(temperature=0.3, d_k=32, seed=4, causal=True, null_route=True)
    lab.set_key(1, 0.25, -0.75)
    lab.set_label(4, 'loan "quoted" <tag>')
    return lab


def test_json_round_trip_is_exact():
    lab = _edited()
    text = lab.to_json()
    data = json.loads(text)
    assert data["format"] == settings_schema.FORMAT_TAG and data["scenario"] == "bank"
    assert set(data) == {"format", *FIELDS}
    other = LabState()
    other.from_json(text)
    assert other.settings() == lab.settings()
    assert other.to_dict() == lab.to_dict()
    np.testing.assert_array_equal(other.snapshot.weights, lab.snapshot.weights)
    assert other.snapshot.null_weight == lab.snapshot.null_weight


def test_partial_import_takes_the_scenarios_values():
    lab = LabState()
    lab.temperature = 5.0
    lab.from_dict({"scenario": "contest", "d_k": 16})
    assert (lab.scenario, lab.d_k, lab.temperature, lab.scale) == ("contest", 16, 1.0, False)


@pytest.mark.parametrize(
    "data, fragment",
    [
        ({"colour": "red"}, "colour: unknown setting"),
        ({"format": "attention-lab/0"}, "format"),
        ({"d_k": "64"}, "d_k: expected a whole number"),
        ({"d_k": True}, "d_k: expected a whole number"),
        ({"d_k": 10**9}, "d_k: 1e+09 is out of range"),
        ({"temperature": None}, "temperature: expected a number, got null"),
        ({"scale": "false"}, "scale: expected true or false"),
        ({"keys": [[1, 0]] * 9, "values": [[1, 0]] * 9}, "keys: 9 entries"),
        ({"keys": [[1, 0], [0]]}, "keys[1]: expected a pair"),
        ({"values": [[1e300, 0]] * 3}, "values[0]: 1e+300 exceeds the coordinate limit"),
        ({"labels": ["a", "b", "c" * 100]}, "labels[2]: label is 100 characters"),
        ({"labels": ["a", "b\u202e", "c"]}, "labels[1]: label contains the control"),
        ({"mask": [False, False, False]}, "every key is masked"),
        ({"keys": [[1, 0]]}, "has 3 entries but keys has 1"),
        ({"distractors": 4096, "d_k": 4096}, "limit"),
        ({"scenario": "__import__('os')"}, "scenario:"),
    ],
)
def test_bad_imports_are_refused_whole_and_named(data, fragment):
    lab = LabState()
    lab.temperature = 2.0
    before, snap = lab.settings(), lab.snapshot
    with pytest.raises(ValueError) as err:
        lab.from_dict(data)
    assert fragment in str(err.value)
    assert lab.settings() == before and lab.snapshot is snap


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('{"temperature": NaN}', "NaN is not a finite number"),
        ('{"temperature": -Infinity}', "-Infinity is not a finite number"),
        ("[]", "must be a JSON object"),
        ('{"d_k": 4', "not valid JSON"),
        ('{"labels": ["a", "b", "c"], "pad": "' + "x" * 70000 + '"}', "limit is 65536 bytes"),
    ],
)
def test_bad_json_text_is_refused(text, fragment):
    lab = LabState()
    with pytest.raises(ValueError, match=fragment):
        lab.from_json(text)


def test_from_dict_refuses_a_non_mapping():
    with pytest.raises(ValueError, match="JSON object"):
        LabState().from_dict([("d_k", 4)])


def test_labels_are_kept_as_plain_text():
    lab = LabState()
    lab.from_dict({"labels": ["<script>alert(1)</script>", "&amp;", "=SUM(A1)"]})
    assert lab.snapshot.labels[0] == "<script>alert(1)</script>"  # the UI escapes, we keep text


_json_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=9),
    max_leaves=30,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from([*FIELDS, "format", "extra"]), _json_value, max_size=5))
def test_fuzzed_imports_either_load_whole_or_change_nothing(data):
    lab = LabState()
    before, snap = lab.settings(), lab.snapshot
    try:
        lab.from_dict(data)
    except ValueError as exc:
        assert str(exc)
        assert lab.settings() == before and lab.snapshot is snap
    else:
        assert lab.error == ""
        again = LabState()
        again.from_json(lab.to_json())
        assert again.settings() == lab.settings()
