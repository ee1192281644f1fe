"""Interventions: each edit does exactly its one job, leaves its inputs alone, and names bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import attention, interventions

KEYS = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
VALUES = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])
QUERY = np.array([1.0, 0.0])

angles = st.floats(-10.0, 10.0, allow_nan=False)
vec2 = st.tuples(st.floats(-5, 5), st.floats(-5, 5)).map(np.array)


# ---------------------------------------------------------------- rotate


def test_rotate_quarter_turn_in_default_plane():
    np.testing.assert_allclose(
        interventions.rotate([1.0, 0.0], math.pi / 2), [0.0, 1.0], atol=1e-15
    )


def test_rotate_other_plane_leaves_remaining_coordinates():
    v = np.array([1.0, 2.0, 3.0])
    out = interventions.rotate(v, math.pi, plane=(0, 2))
    np.testing.assert_allclose(out, [-1.0, 2.0, -3.0], atol=1e-12)
    assert v.tolist() == [1.0, 2.0, 3.0]  # input untouched


def test_rotate_works_row_wise_on_a_batch():
    out = interventions.rotate(KEYS, math.pi / 2)
    np.testing.assert_allclose(out, [[0, 1], [-0.6, 0.8], [-1, 0]], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(v=vec2, a=angles, b=angles)
def test_rotate_keeps_length_and_composes(v, a, b):
    once = interventions.rotate(interventions.rotate(v, a), b)
    np.testing.assert_allclose(once, interventions.rotate(v, a + b), atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(once), np.linalg.norm(v), atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"vec": [1.0, 0.0], "angle_rad": math.nan}, "angle_rad must be finite"),
        ({"vec": [1.0, 0.0], "angle_rad": "x"}, "angle_rad must be a number"),
        ({"vec": [1.0, 0.0], "angle_rad": 0.1, "plane": (0, 2)}, r"plane\[1\]=2 is out of range"),
        ({"vec": [1.0, 0.0], "angle_rad": 0.1, "plane": (1, 1)}, "two different coordinates"),
        ({"vec": [1.0, 0.0], "angle_rad": 0.1, "plane": (0,)}, "plane must name two"),
        ({"vec": [math.inf, 0.0], "angle_rad": 0.1}, "vec must be finite"),
        ({"vec": 3.0, "angle_rad": 0.1}, "got a scalar"),
    ],
)
def test_rotate_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        interventions.rotate(**kwargs)


# ---------------------------------------------------------------- values and keys


def test_swap_values_moves_output_not_route():
    swapped = interventions.swap_values(VALUES, 0, 1)
    assert swapped[0].tolist() == [0.0, 10.0] and swapped[1].tolist() == [10.0, 0.0]
    assert VALUES[0].tolist() == [10.0, 0.0]
    before = attention(QUERY, KEYS, VALUES)
    after = attention(QUERY, KEYS, swapped)
    np.testing.assert_array_equal(before.weights, after.weights)
    assert not np.allclose(before.output, after.output)


@pytest.mark.parametrize(("i", "j"), [(3, 0), (0, -1), (1.0, 2), (True, 0)])
def test_swap_values_rejects_bad_indices(i, j):
    with pytest.raises(ValueError, match="out of range|integer index"):
        interventions.swap_values(VALUES, i, j)


def test_replace_key_changes_one_row():
    out = interventions.replace_key(KEYS, 2, [5.0, 5.0])
    assert out[2].tolist() == [5.0, 5.0]
    np.testing.assert_array_equal(out[:2], KEYS[:2])
    assert KEYS[2].tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    ("i", "new", "message"),
    [(0, [1.0, 2.0, 3.0], "new_key must have 2 components"), (9, [1.0, 0.0], "out of range")],
)
def test_replace_key_errors(i, new, message):
    with pytest.raises(ValueError, match=message):
        interventions.replace_key(KEYS, i, new)


def test_set_key_norm_keeps_direction():
    out = interventions.set_key_norm(KEYS, 1, 5.0)
    np.testing.assert_allclose(out[1], [4.0, 3.0])
    np.testing.assert_allclose(interventions.set_key_norm(KEYS, 1, 0.0)[1], [0.0, 0.0])


def test_set_key_norm_errors():
    with pytest.raises(ValueError, match="norm must be >= 0"):
        interventions.set_key_norm(KEYS, 0, -1.0)
    with pytest.raises(ValueError, match="zero vector"):
        interventions.set_key_norm(np.zeros((2, 2)), 0, 1.0)
    with pytest.raises(ValueError, match="keys must have 2 dimension"):
        interventions.set_key_norm([1.0, 2.0], 0, 1.0)


def test_normalise_unit_rows_and_zero_error():
    np.testing.assert_allclose(
        np.linalg.norm(interventions.normalise([[3.0, 4.0], [0.0, 2.0]]), axis=1), 1
    )
    np.testing.assert_allclose(interventions.normalise([3.0, 4.0]), [0.6, 0.8])
    with pytest.raises(ValueError, match=r"zero vector at rows \[\[1\]\]"):
        interventions.normalise([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="cannot normalise a zero vector"):
        interventions.normalise([0.0, 0.0])


def test_permute_pairs_permutes_weights_and_keeps_output():
    perm = [2, 0, 1]
    k, v = interventions.permute_pairs(KEYS, VALUES, perm)
    before = attention(QUERY, KEYS, VALUES)
    after = attention(QUERY, k, v)
    np.testing.assert_allclose(after.weights, before.weights[perm])
    np.testing.assert_allclose(after.output, before.output)


@pytest.mark.parametrize(
    ("perm", "message"),
    [([0, 0, 1], "permutation of 0..2"), ([0, 1], "must be 3 integers"), ([0.0, 1, 2], "integers")],
)
def test_permute_pairs_errors(perm, message):
    with pytest.raises(ValueError, match=message):
        interventions.permute_pairs(KEYS, VALUES, perm)


def test_permute_pairs_needs_matching_rows():
    with pytest.raises(ValueError, match="one row per key"):
        interventions.permute_pairs(KEYS, VALUES[:2], [0, 1, 2])


@settings(max_examples=30, deadline=None)
@given(c=st.floats(-50, 50))
def test_shift_bias_never_moves_weights(c):
    bias = interventions.shift_bias(3, c)
    assert bias.shape == (3,) and np.all(bias == c)
    np.testing.assert_allclose(
        attention(QUERY, KEYS, VALUES, mask=bias).weights,
        attention(QUERY, KEYS, VALUES).weights,
        atol=1e-12,
    )


def test_shift_bias_errors():
    with pytest.raises(ValueError, match="n_keys must be a positive integer"):
        interventions.shift_bias(0, 1.0)
    with pytest.raises(ValueError, match="c must be finite"):
        interventions.shift_bias(3, math.inf)


# ---------------------------------------------------------------- distractors


@settings(max_examples=30, deadline=None)
@given(
    count=st.integers(1, 40),
    norm=st.floats(0.1, 10),
    similarity=st.floats(-1, 1),
    seed=st.integers(0, 2**31),
    dim=st.integers(2, 5),
)
def test_distractors_lie_within_the_spread_of_the_requested_norm_and_cosine(
    count, norm, similarity, seed, dim
):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(dim) + 0.1
    keys = rng.standard_normal((3, dim))
    values = rng.standard_normal((3, 2))
    k, v, labels = interventions.insert_distractors(
        q, keys, values, count=count, norm=norm, similarity=similarity, seed=seed
    )
    added = k[3:]
    assert k.shape == (3 + count, dim) and v.shape == (3 + count, 2)
    np.testing.assert_array_equal(k[:3], keys)
    lengths = np.linalg.norm(added, axis=1)
    assert np.all(np.abs(lengths / norm - 1) <= interventions.DISTRACTOR_NORM_SPREAD + 1e-9)
    cos = added @ q / (lengths * np.linalg.norm(q))
    width = min(interventions.DISTRACTOR_SPREAD, 1 - abs(similarity))
    assert np.all(np.abs(cos - similarity) <= width + 1e-9)
    assert labels == tuple(f"d{i}" for i in range(1, count + 1))


@pytest.mark.parametrize("similarity", [-0.9, -0.3, 0.0, 0.6, 0.95])
@pytest.mark.parametrize("dim", [2, 3])
def test_a_crowd_of_distractors_is_a_cloud_centred_on_the_requested_cosine_and_norm(
    similarity, dim
):
    q = np.array([0.6, -1.3, 0.4][:dim])
    keys, values = np.ones((1, dim)), np.ones((1, 2))
    count, norm = 4000, 2.5
    k, _, _ = interventions.insert_distractors(
        q, keys, values, count=count, norm=norm, similarity=similarity, seed=11
    )
    added = k[1:]
    lengths = np.linalg.norm(added, axis=1)
    cos = added @ q / (lengths * np.linalg.norm(q))
    width = min(interventions.DISTRACTOR_SPREAD, 1 - abs(similarity))
    # Uniform on [s - w, s + w]: mean s, standard deviation w / sqrt(3); 5 standard errors.
    assert abs(cos.mean() - similarity) < 5 * width / np.sqrt(3 * count)
    assert cos.std() == pytest.approx(width / np.sqrt(3), rel=0.1)
    spread = interventions.DISTRACTOR_NORM_SPREAD * norm
    assert abs(lengths.mean() - norm) < 5 * spread / np.sqrt(3 * count)
    assert lengths.std() == pytest.approx(spread / np.sqrt(3), rel=0.1)
    if dim == 2:  # both sides of the query, about equally often
        side = np.sign(q[0] * added[:, 1] - q[1] * added[:, 0])
        assert abs(side.mean()) < 0.1


def test_distractors_at_cosine_one_all_lie_along_the_query():
    q = np.array([1.0, 2.0])
    k, _, _ = interventions.insert_distractors(
        q, KEYS, VALUES, count=50, norm=1, similarity=1.0, seed=3
    )
    cos = k[3:] @ q / (np.linalg.norm(k[3:], axis=1) * np.linalg.norm(q))
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)


def test_in_the_plane_turning_the_query_turns_the_distractors_with_it():
    # The lab previews a dragged query in the browser by rotating the cloud it was sent.
    q = np.array([1.5, 0.5])
    angle = 0.7
    turned = interventions.rotate(q, angle)
    a, _, _ = interventions.insert_distractors(
        q, KEYS, VALUES, count=64, norm=2, similarity=0.4, seed=9
    )
    b, _, _ = interventions.insert_distractors(
        turned, KEYS, VALUES, count=64, norm=2, similarity=0.4, seed=9
    )
    np.testing.assert_allclose(interventions.rotate(a[3:], angle), b[3:], atol=1e-12)


def test_distractors_are_seeded_and_prefix_stable():
    a = interventions.insert_distractors(
        QUERY, KEYS, VALUES, count=10, norm=1, similarity=0.3, seed=5
    )
    b = interventions.insert_distractors(
        QUERY, KEYS, VALUES, count=4, norm=1, similarity=0.3, seed=5
    )
    c = interventions.insert_distractors(
        QUERY, KEYS, VALUES, count=10, norm=1, similarity=0.3, seed=6
    )
    np.testing.assert_array_equal(a[0][:7], b[0])
    np.testing.assert_array_equal(a[1][:7], b[1])
    assert not np.array_equal(a[0], c[0])


def test_distractors_dilute_the_useful_key():
    # The raw score of key 0 stays the same; its weight falls as candidates are added.
    weights = []
    for count in (0, 16, 256, 4096):
        k, v, _ = interventions.insert_distractors(
            QUERY, KEYS, VALUES, count=count, norm=1, similarity=0.5, seed=0
        )
        weights.append(float(attention(QUERY, k, v).weights[0]))
    assert weights == sorted(weights, reverse=True) and weights[-1] < 0.01 < weights[0]


def test_distractor_values_are_sized_like_the_existing_ones():
    _, v, _ = interventions.insert_distractors(
        QUERY, KEYS, VALUES, count=8, norm=1, similarity=0, seed=1
    )
    np.testing.assert_allclose(np.linalg.norm(v[3:], axis=1), np.median([10, 10, 50**0.5]))


def test_zero_distractors_is_a_copy():
    k, v, labels = interventions.insert_distractors(
        [0.0, 0.0], KEYS, VALUES, count=0, norm=1, similarity=0, seed=0
    )
    np.testing.assert_array_equal(k, KEYS)
    assert labels == () and k is not KEYS


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"count": 4097}, "count must be between 0 and 4096"),
        ({"count": -1}, "count must be between"),
        ({"count": 2.5}, "count must be an integer"),
        ({"norm": 0.0}, "norm must be > 0"),
        ({"similarity": 1.5}, r"must lie in \[-1, 1\]"),
        ({"seed": -3}, "seed must be a non-negative integer"),
    ],
)
def test_distractor_errors(kwargs, message):
    args = {"count": 3, "norm": 1.0, "similarity": 0.0, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        interventions.insert_distractors(QUERY, KEYS, VALUES, **args)


def test_distractors_need_a_direction_and_matching_dims():
    with pytest.raises(ValueError, match="query is the zero vector"):
        interventions.insert_distractors(
            [0.0, 0.0], KEYS, VALUES, count=1, norm=1, similarity=0, seed=0
        )
    with pytest.raises(ValueError, match="query has 3 components but keys have 2"):
        interventions.insert_distractors(
            [1.0, 0, 0], KEYS, VALUES, count=1, norm=1, similarity=0, seed=0
        )


# ---------------------------------------------------------------- null route


def test_null_route_shape_and_bias():
    k, v, bias = interventions.null_route(KEYS, VALUES, 1.5)
    assert k.shape == (4, 2) and v.shape == (4, 2)
    assert np.all(k[3] == 0) and np.all(v[3] == 0)
    assert bias.tolist() == [0.0, 0.0, 0.0, 1.5]


@pytest.mark.parametrize("temperature", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("scale", [True, False])
def test_null_logit_is_threshold_over_temperature(temperature, scale):
    k, v, bias = interventions.null_route(KEYS, VALUES, 2.0)
    res = attention(QUERY, k, v, mask=bias, temperature=temperature, scale=scale)
    assert float(res.logits[3]) == pytest.approx(2.0 / temperature)
    # The refused share contributes nothing: output = (1 - w_null) * route over real keys.
    real = attention(QUERY, KEYS, VALUES, temperature=temperature, scale=scale)
    np.testing.assert_allclose(res.output, (1 - res.weights[3]) * real.output, atol=1e-12)


def test_null_route_takes_most_mass_when_nothing_fits():
    keys = np.array([[0.1, 1.0], [-0.2, 0.9], [0.0, -1.0]])
    k, v, bias = interventions.null_route(keys, VALUES, 2.0)
    assert attention(QUERY, k, v, mask=bias).weights[3] > 0.7
    k, v, bias = interventions.null_route(
        KEYS * 10, VALUES, 2.0
    )  # a well-aligned key beats the threshold
    assert attention(QUERY, k, v, mask=bias).weights[3] < 0.05


def test_null_route_with_legal_folds_the_mask_in():
    k, v, bias = interventions.null_route(KEYS, VALUES, 1.0, legal=np.array([True, False, True]))
    assert bias.tolist() == [0.0, -math.inf, 0.0, 1.0]
    assert attention(QUERY, k, v, mask=bias).weights[1] == 0.0


def test_null_route_errors():
    with pytest.raises(ValueError, match="threshold must be finite"):
        interventions.null_route(KEYS, VALUES, math.nan)
    with pytest.raises(ValueError, match="legal must be 3 booleans"):
        interventions.null_route(KEYS, VALUES, 1.0, legal=[1, 0, 1])
    with pytest.raises(ValueError, match="one row per key"):
        interventions.null_route(KEYS, VALUES[:1], 1.0)
