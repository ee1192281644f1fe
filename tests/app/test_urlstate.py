"""URL text and JSON values: parsing, serialising, caps, and the lab restored from a link."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.state import settings_schema
from app.state.lab_state import FIELDS, LabState

# ------------------------------------------------------------------ pure functions


@pytest.mark.parametrize(
    "name, text, value",
    [
        ("temperature", "0.5", 0.5),
        ("temperature", " 20 ", 20.0),
        ("d_k", "64", 64),
        ("scale", "false", False),
        ("scale", "TRUE", True),
        ("causal", "1", True),
        ("scenario", "bank", "bank"),
        ("angle", "-180", -180.0),
        ("keys", "1,0;0.8,0.6", [[1.0, 0.0], [0.8, 0.6]]),
        ("mask", "true,false", [True, False]),
        ("labels", '["a, b","<i>"]', ["a, b", "<i>"]),
        ("backend", "torch-cpu", "torch-cpu"),
    ],
)
def test_parse_text_reads_each_kind(name, text, value):
    assert settings_schema.parse_text(FIELDS[name], text) == value


@pytest.mark.parametrize(
    "name, text, fragment",
    [
        ("temperature", "hot", "'hot' is not a number"),
        ("temperature", "nan", "not a finite number"),
        ("temperature", "inf", "not a finite number"),
        ("temperature", "0", "out of range"),
        ("temperature", "21", "out of range"),
        ("d_k", "64.5", "not a whole number"),
        ("d_k", "1", "out of range"),
        ("d_k", "99999", "out of range"),
        ("distractors", "5000", "out of range"),
        ("seed", "-1", "out of range"),
        ("scale", "maybe", "not true or false"),
        ("scenario", "<script>", "is not one of"),
        ("backend", "tpu", "is not one of"),
        ("keys", "1,0,3", "is not a pair"),
        ("keys", ";".join(["1,0"] * 9), "9 entries given"),
        ("keys", "1e9,0", "coordinate limit"),
        ("keys", "1,nan", "not a finite number"),
        ("mask", "true,perhaps", "mask[1]"),
        ("labels", "[1]", "labels[0]"),
        ("labels", "not json", "not a JSON list"),
        ("labels", '["' + "x" * 41 + '"]', "at most 40"),
        ("temperature", "1" * 3000, "refused"),
    ],
)
def test_parse_text_names_the_field_and_problem(name, text, fragment):
    with pytest.raises(ValueError) as err:
        settings_schema.parse_text(FIELDS[name], text)
    assert str(err.value).startswith(name)
    assert fragment in str(err.value)


@settings(max_examples=40, deadline=None)
@given(
    temperature=st.floats(0.05, 20.0),
    angle=st.floats(-180.0, 180.0),
    d_k=st.integers(2, 4096),
    keys=st.lists(st.lists(st.floats(-1000, 1000), min_size=2, max_size=2), min_size=1, max_size=8),
    labels=st.lists(
        st.text(
            st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn")),
            min_size=1,
            max_size=40,
        ).filter(lambda t: t == t.strip() and t.strip()),
        min_size=1,
        max_size=8,
    ),
)
def test_format_then_parse_is_exact(temperature, angle, d_k, keys, labels):
    values = {
        "temperature": temperature,
        "angle": angle,
        "d_k": d_k,
        "keys": keys,
        "labels": labels,
    }
    for name, value in values.items():
        text = settings_schema.format_text(FIELDS[name], value)
        assert settings_schema.parse_text(FIELDS[name], text) == value


def test_format_query_lists_only_differences():
    out = settings_schema.format_query(
        {"temperature": 0.5, "d_k": 2, "scale": False},
        {"temperature": 1.0, "d_k": 2, "scale": True},
        FIELDS,
    )
    assert out == {"temperature": "0.5", "scale": "false"}


def test_query_string_round_trip():
    params = {"temperature": "0.5", "keys": "1.0,0.0;0.0,1.0", "labels": '["a&b","c=d"]'}
    text = settings_schema.query_string(params)
    assert text.startswith("?") and "&b" not in text.split("labels=")[1]
    assert settings_schema.split_query_string(text) == params
    assert settings_schema.query_string({}) == ""


def test_parse_query_collects_one_warning_per_bad_value():
    values, warnings = settings_schema.parse_query(
        {"temperature": "0.5", "d_k": "big", "colour": "red", "scale": "nah"}, FIELDS
    )
    assert values == {"temperature": 0.5}
    assert len(warnings) == 3
    assert any(w.startswith("d_k:") and "using the default" in w for w in warnings)
    assert any("unknown setting 'colour'" in w for w in warnings)


def test_check_json_is_strictly_typed():
    assert settings_schema.check_json(FIELDS["d_k"], 64.0) == 64
    for name, bad in [
        ("d_k", True),
        ("d_k", "64"),
        ("d_k", 6.5),
        ("temperature", "1"),
        ("temperature", None),
        ("scale", 1),
        ("keys", [[1, 0], [1]]),
        ("keys", [[1, True]]),
        ("keys", "1,0"),
        ("mask", [1, 0]),
        ("labels", [["nested"]]),
    ]:
        with pytest.raises(ValueError, match=f"^{name}"):
            settings_schema.check_json(FIELDS[name], bad)


def test_load_json_refuses_what_is_not_a_small_finite_object():
    assert settings_schema.load_json('{"d_k": 4}') == {"d_k": 4}
    for text, fragment in [
        ("x" * (settings_schema.MAX_IMPORT_BYTES + 1), "limit is 65536 bytes"),
        ('{"temperature": NaN}', "NaN is not a finite number"),
        ('{"temperature": Infinity}', "Infinity is not a finite number"),
        ("[1, 2]", "must be a JSON object"),
        ("{", "not valid JSON"),
        ("[" * 20000 + "]" * 20000, "nested too deeply"),
        (b"\xff\xfe{", "not UTF-8"),
        ('"\ud800"', "must be a JSON object"),
        ("\ud800", "not valid JSON"),
    ]:
        with pytest.raises(ValueError, match=fragment):
            settings_schema.load_json(text)


def test_check_config_names_unknown_keys_and_format():
    with pytest.raises(ValueError, match="^evil: unknown setting"):
        settings_schema.check_config({"evil": 1}, FIELDS)
    with pytest.raises(ValueError, match="^format"):
        settings_schema.check_config({"format": "other/9"}, FIELDS)


def test_field_limits_agree_with_the_state_parameters():
    lab = LabState()
    for name, field in FIELDS.items():
        p = lab.param[name]
        if field.kind in ("float", "int"):
            assert tuple(p.bounds) == (field.low, field.high), name
        if field.kind == "choice":
            assert tuple(p.objects) == field.choices, name


# ------------------------------------------------------------------ the lab from a URL


def test_default_lab_has_an_empty_query():
    assert LabState().query_params() == {}


def test_issue_example_url_round_trips():
    lab = LabState()
    warnings = lab.apply_query_params(
        {"temperature": "0.5", "d_k": "64", "scale": "false", "scenario": "bank"}
    )
    assert warnings == []
    assert (lab.scenario, lab.temperature, lab.d_k, lab.scale) == ("bank", 0.5, 64, False)
    assert lab.labels[1] == "bank" and lab.error == ""
    assert lab.query_params() == {
        "scenario": "bank",
        "temperature": "0.5",
        "d_k": "64",
        "scale": "false",
    }


def test_edited_lab_restores_exactly_from_its_url():
    lab = LabState(scenario="limit")
    lab.param.update(angle=33.3, causal=True, seed=17, d_k=128, distractors=10)
    lab.swap_values(0, 4)
    lab.set_key(2, 0.1234567891, -2.5)
    lab.toggle_mask(1)
    lab.set_label(0, "approved, <b>")
    lab.backend = "torch-cpu"
    params = lab.query_params()
    assert params["causal"] == "true" and "backend" in params
    other = LabState()
    assert (
        other.apply_query_params(
            settings_schema.split_query_string(settings_schema.query_string(params))
        )
        == []
    )
    assert other.settings() == lab.settings()
    assert lab.settle(120) and other.settle(120)  # both answered by the backend they name
    assert other.snapshot.backend_used == lab.snapshot.backend_used
    np.testing.assert_array_equal(other.snapshot.weights, lab.snapshot.weights)


def test_url_resets_settings_it_does_not_mention():
    lab = LabState()
    lab.param.update(temperature=3.0, normalise=True)
    lab.apply_query_params({"d_k": "8"})
    assert (lab.temperature, lab.normalise, lab.d_k) == (1.0, False, 8)


def test_invalid_url_values_are_named_and_fall_back():
    lab = LabState()
    warnings = lab.apply_query_params(
        {"temperature": "-3", "d_k": "64", "scenario": "nowhere", "angle": "abc"}
    )
    assert lab.error == ""
    assert lab.scenario == "basic" and lab.temperature == 1.0 and lab.angle == 0.0
    assert lab.d_k == 64
    assert [w.split(":")[0] for w in warnings] == ["temperature", "scenario", "angle"]


def test_url_with_every_key_masked_unmasks_with_a_warning():
    lab = LabState()
    warnings = lab.apply_query_params({"mask": "false,false,false"})
    assert lab.error == "" and lab.mask == [True, True, True]
    assert any("every key is masked" in w for w in warnings)


def test_url_list_length_mismatches_are_reconciled():
    lab = LabState()
    warnings = lab.apply_query_params({"keys": "1,0;0,1", "values": "1,1"})
    assert lab.error == "" and lab.keys == [[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]
    assert any("keys has 2 pairs but values has 1" in w for w in warnings)
    warnings = lab.apply_query_params({"keys": "1,0;0,1", "values": "1,1;2,2", "mask": "true"})
    assert lab.error == "" and lab.mask == [True, True] and lab.labels == ["key 1", "key 2"]
    assert lab.query_position == 1
    assert any(w.startswith("mask has 1 entries") for w in warnings)


def test_url_past_size_cap_falls_back():
    lab = LabState()
    warnings = lab.apply_query_params({"d_k": "4096", "distractors": "4096"})
    assert lab.error == "" and lab.distractors == 0 and lab.d_k == 4096
    assert any("size limit" in w for w in warnings)


def test_url_that_cannot_compute_loads_the_scenario():
    lab = LabState()
    warnings = lab.apply_query_params({"keys": "0,0;1,0;0,1", "normalise": "true"})
    assert lab.error == "" and not lab.normalise
    assert any("zero length" in w for w in warnings)


_text = st.text(max_size=30)
_value = st.one_of(
    _text,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["true", "false", "1,0;0,1", "1,0;0,1;2,2", "true,false,true", '["a"]']),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.dictionaries(st.sampled_from([*FIELDS, "junk"]), _value, max_size=6))
def test_fuzzed_urls_always_leave_a_valid_lab(params):
    lab = LabState()
    warnings = lab.apply_query_params(params)
    assert lab.error == ""
    assert all(isinstance(w, str) and w for w in warnings)
    snap = lab.snapshot
    assert math.isfinite(snap.entropy)
    assert snap.weights.sum() + (snap.null_weight or 0.0) == pytest.approx(1.0)
    # What the lab now holds survives its own URL.
    again = LabState()
    assert again.apply_query_params(lab.query_params()) == []
    assert again.settings() == lab.settings()
