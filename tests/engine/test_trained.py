"""The shipped binding model: API, parser, edits and experiments (NumPy only, no torch)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import trained
from engine.trained import binding_task as task
from engine.trained import experiments as ex
from engine.trained.card import TOKEN_KINDS


@pytest.fixture(scope="module")
def model():
    return trained.load("binding")


# ------------------------------------------------------------------------------------ API


def test_available_lists_binding_installed():
    rows = trained.available()
    names = [r[0] for r in rows]
    assert "binding" in names
    name, title, installed, reason = rows[names.index("binding")]
    assert installed and reason == "" and title


def test_load_is_cached_and_read_only(model):
    assert trained.load("binding") is model
    with pytest.raises(ValueError):
        model.w["embed"][0, 0] = 1.0
    with pytest.raises(ValueError, match="unknown model"):
        trained.load("no-such-model")


def test_model_attributes(model):
    assert model.name == "binding"
    assert "approved_limit" in model.names and "5000" in model.values and "7000" in model.values
    assert (model.n_layers, model.n_heads, model.d_head) == (2, 2, 32)
    layer, head = model.retrieval_head
    assert 0 <= layer < model.n_layers and 0 <= head < model.n_heads
    assert any("approved_limit" in t and "5000" in t for t in model.examples.values())


def test_run_answers_the_rebound_example(model):
    run = model.run("a=5; b=7; a=3; ?a")
    assert run.answer == "3" and run.expected == "3"
    assert run.tokens[0] == task.BOS and run.tokens[-2:] == ("?", "a")
    assert run.query_position == len(run.tokens) - 1
    assert math.isclose(sum(run.probs.values()), 1.0, rel_tol=1e-9)
    assert set(run.probs) == set(model.values) | {"none"}


@pytest.mark.parametrize("title", list(trained.load("binding").examples))
def test_examples_are_answered_correctly(model, title):
    run = model.run(model.examples[title])
    assert run.answer == run.expected


def test_whitespace_is_ignored(model):
    a = model.run("a=5;b=7;a=3;?a")
    b = model.run("  a = 5 ;\n b =7;  a= 3 ; ? a ")
    assert a.tokens == b.tokens
    np.testing.assert_array_equal(a.logits, b.logits)


def test_undefined_name_answers_none(model):
    run = model.run("x=4; rate=12; y=9; ?charge")
    assert run.expected == "none" and run.answer == "none"


def test_head_record_is_consistent(model):
    run = model.run("approved_limit=5000; temporary_limit=7000; charge=250; ?temporary_limit")
    n = len(run.tokens)
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            r = run.head(layer, head)
            assert r.q.shape == (model.d_head,) and r.k.shape == (n, model.d_head)
            np.testing.assert_allclose(r.scores, r.k @ r.q, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(
                r.logits, r.scores * r.scale_factor / r.temperature, rtol=1e-12
            )
            assert r.scale_factor == pytest.approx(1 / math.sqrt(model.d_head))
            np.testing.assert_allclose(r.output, r.weights @ r.v, atol=1e-12)
            wo = model.w[f"wo{layer}"][head * model.d_head : (head + 1) * model.d_head]
            np.testing.assert_allclose(r.contribution, r.output @ wo, atol=1e-12)
            assert r.legal.all() and r.weights.sum() == pytest.approx(1.0)
            np.testing.assert_array_equal(run.attention(layer, head), r.weights)
    # Causality: the first row sees only itself.
    assert run.head(0, 0).all_weights[0, 0] == pytest.approx(1.0)


def test_retrieval_head_looks_at_the_answer_value(model):
    layer, head = model.retrieval_head
    run = model.run("a=5; b=7; a=3; ?a")
    assert int(np.argmax(run.attention(layer, head))) == task.value_position(2)


# ------------------------------------------------------------------------------ parser


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a=5; b=7;", "no question"),
        ("a=5; ?a ?b", "second question"),
        ("a=5; ?a b=3;", "must come last"),
        ("foo=5; ?foo", "unknown name 'foo'"),
        ("a=5; ?foo", "unknown name 'foo'"),
        ("a=5000000; ?a", "unknown value '5000000'"),
        ("a 5; ?a", "expected '='"),
        ("a=5 b=3; ?a", "expected ';'"),
        ("a=b; ?a", "expected a value"),
        ("=5; ?a", "expected a name"),
        ("a=5; ?", "names nothing"),
        ("a=5; ?7", "expected a name after"),
        ("?a", "no definition"),
        ("a=5; #b; ?a", "unexpected character '#'"),
        ("a=5;" * 7 + "?a", "too many definitions"),
        ("a" * 3000, "limit is"),
    ],
)
def test_bad_programs_raise_with_a_location(model, text, needle):
    with pytest.raises(ValueError, match=needle):
        model.check(text)


def test_error_names_token_and_offset(model):
    with pytest.raises(ValueError) as info:
        model.check("a=5; zz=3; ?a")
    msg = str(info.value)
    assert "'zz'" in msg and "token 4" in msg and "offset 5" in msg


def test_check_returns_tokens(model):
    assert model.check("a=5; ?a") == ["<bos>", "a", "=", "5", ";", "?", "a"]


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab xy=;?0157_-#\n", max_size=60))
def test_parser_fuzz_only_value_errors(text):
    try:
        program = task.parse(text)
    except ValueError:
        return
    assert program.tokens[0] == task.BOS and program.tokens[-2] == "?"
    assert program.answer in task.ANSWERS


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(task.VOCAB[1:] + ("?", "foo", "99999")), max_size=30))
def test_parser_fuzz_token_soup(tokens):
    try:
        task.parse(" ".join(tokens))
    except ValueError:
        pass


def test_generator_answer_position_is_uniform():
    programs = task.dataset(3, 3000)
    defined = [p for p in programs if p.kind != "undefined"]
    last = np.mean([p.answer_definition == len(p.definitions) - 1 for p in defined])
    # Uniform over 2..6 definitions puts the answer last about 29% of the time, not ~100%.
    assert 0.2 < last < 0.4
    kinds = {k: sum(p.kind == k for p in programs) for k in ("plain", "rebound", "undefined")}
    assert all(v > 300 for v in kinds.values())


def test_generator_is_deterministic():
    assert [p.text for p in task.dataset(9, 50)] == [p.text for p in task.dataset(9, 50)]


# -------------------------------------------------------------------------------- edits

TEXT = "approved_limit=5000; temporary_limit=7000; charge=250; ?temporary_limit"


@pytest.fixture(scope="module")
def base(model):
    return model.run(TEXT)


def _rh(model):
    return model.retrieval_head


def test_swap_values_keeps_weights_changes_output(model, base):
    layer, head = _rh(model)
    run = base.intervene(trained.SwapValues(layer, head, 7, 11))
    np.testing.assert_array_equal(run.attention(layer, head), base.attention(layer, head))
    assert np.linalg.norm(run.head(layer, head).output - base.head(layer, head).output) > 1e-3
    np.testing.assert_array_equal(run.head(layer, head).v[7], base.head(layer, head).v[11])
    assert base.edits == () and len(run.edits) == 1


def test_replace_key_changes_weights(model, base):
    layer, head = _rh(model)
    run = base.intervene(trained.ReplaceKey(layer, head, 7, 11))
    np.testing.assert_array_equal(run.head(layer, head).k[7], base.head(layer, head).k[11])
    assert np.max(np.abs(run.attention(layer, head) - base.attention(layer, head))) > 1e-3


def test_mask_position_gives_exact_zero(model, base):
    layer, head = _rh(model)
    run = base.intervene(trained.MaskPosition(layer, head, 7))
    w = run.attention(layer, head)
    assert w[7] == 0.0 and not run.head(layer, head).legal[7]
    assert w.sum() == pytest.approx(1.0)
    every = base.intervene(trained.MaskPosition(None, None, 3))
    for lay in range(model.n_layers):
        for hd in range(model.n_heads):
            assert every.head(lay, hd).weights[3] == 0.0
            assert np.all(every.head(lay, hd).all_weights[:, 3] == 0.0)


def test_window_hides_positions(model, base):
    layer, head = _rh(model)
    run = base.intervene(trained.Window(layer, head, 4))
    w = run.attention(layer, head)
    q = base.query_position
    assert np.all(w[: q - 3] == 0.0) and w[q - 3 :].sum() == pytest.approx(1.0)


def test_temperature_preserves_ranking(model, base):
    layer, head = _rh(model)
    for t in (0.25, 4.0):
        run = base.intervene(trained.HeadTemperature(layer, head, t))
        r0, r1 = base.head(layer, head), run.head(layer, head)
        assert r1.temperature == t
        np.testing.assert_array_equal(np.argsort(r0.logits), np.argsort(r1.logits))
        np.testing.assert_allclose(r1.logits * t, r0.logits, rtol=1e-12)


def test_hotter_head_spreads(model, base):
    layer, head = _rh(model)
    hot = base.intervene(trained.HeadTemperature(layer, head, 4.0)).attention(layer, head)
    assert hot.max() < base.attention(layer, head).max()


def test_rotate_query_preserves_norm_and_turns(model, base):
    layer, head = _rh(model)
    q0 = base.head(layer, head).q
    for deg in (30.0, 90.0, 180.0):
        q1 = base.intervene(trained.RotateQuery(layer, head, deg)).head(layer, head).q
        assert np.linalg.norm(q1) == pytest.approx(np.linalg.norm(q0), rel=1e-12)
        cos = q0 @ q1 / (np.linalg.norm(q0) * np.linalg.norm(q1))
        assert cos == pytest.approx(math.cos(math.radians(deg)), abs=1e-9)


def test_ablate_head_zeroes_contribution(model, base):
    layer, head = _rh(model)
    run = base.intervene(trained.AblateHead(layer, head))
    assert np.all(run.head(layer, head).contribution == 0.0)
    assert np.all(run.head(layer, head).output == 0.0)


def test_layer0_edit_changes_layer1_and_layer1_edit_reuses_layer0(model, base):
    run0 = base.intervene(trained.AblateHead(0, 0))
    assert not np.array_equal(run0.residual(1), base.residual(1))
    run1 = base.intervene(trained.AblateHead(1, 0))
    assert np.shares_memory(run1.residual(1), base.residual(1))  # layer 0 not recomputed
    np.testing.assert_array_equal(run1.head(0, 0).weights, base.head(0, 0).weights)


def test_intervene_matches_run_with_edits(model, base):
    edits = (trained.ScaleKey(1, 0, 7, 3.0), trained.ScaleValue(0, 1, 3, 0.5))
    a = base.intervene(*edits)
    b = model.run(TEXT, edits=edits)
    np.testing.assert_allclose(a.logits, b.logits, rtol=1e-12, atol=1e-12)
    assert a.edits == b.edits == edits


def test_original_run_is_untouched(model, base):
    before = dict(base.probs), base.attention(1, 0).copy()
    base.intervene(trained.SwapValues(1, 0, 3, 7), trained.MaskPosition(1, 1, 7))
    assert base.probs == before[0]
    np.testing.assert_array_equal(base.attention(1, 0), before[1])


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda: trained.AblateHead(5, 0), "layer 5"),
        (lambda: trained.AblateHead(0, 9), "head 9"),
        (lambda: trained.MaskPosition(1, 0, 99), "position 99"),
        (lambda: trained.SwapValues(1, 0, -1, 2), "i -1"),
        (lambda: trained.ReplaceKey(1, 0, 2, 50), "source 50"),
    ],
)
def test_bad_edits_raise_at_run(model, make, needle):
    with pytest.raises(ValueError, match=needle):
        model.run(TEXT, edits=[make()])


@pytest.mark.parametrize(
    "make",
    [
        lambda: trained.HeadTemperature(1, 0, 0.0),
        lambda: trained.HeadTemperature(1, 0, -2.0),
        lambda: trained.HeadTemperature(1, 0, float("nan")),
        lambda: trained.Window(1, 0, 0),
        lambda: trained.ScaleKey(1, 0, 3, float("inf")),
        lambda: trained.AblateHead(1.5, 0),
        lambda: trained.AblateHead(None, 0),
    ],
)
def test_bad_edits_raise_at_construction(make):
    with pytest.raises(ValueError):
        make()


def test_masking_every_position_raises(model, base):
    n = len(base.tokens)
    edits = [trained.MaskPosition(1, 0, p) for p in range(n)]
    with pytest.raises(ValueError, match="no key"):
        base.intervene(*edits)


def test_non_edit_is_rejected(model):
    with pytest.raises(ValueError, match="edit"):
        model.run(TEXT, edits=["ablate"])


def test_describe_strings(model):
    for e in (
        trained.SwapValues(1, 0, 3, 7),
        trained.ReplaceKey(1, 0, 3, 7),
        trained.ScaleKey(1, 0, 3, 2.0),
        trained.ScaleValue(1, 0, 3, 2.0),
        trained.MaskPosition(None, None, 3),
        trained.Window(1, 0, 4),
        trained.HeadTemperature(1, 0, 2.0),
        trained.RotateQuery(1, 0, 90.0),
        trained.AblateHead(1, 0),
    ):
        assert isinstance(e.describe(), str) and e.describe()


# -------------------------------------------------------------------------- experiments


@pytest.mark.parametrize("title", list(trained.load("binding").examples))
def test_experiments_on_each_example(model, title):
    text = model.examples[title]
    results = ex.run_all(model, text)
    assert {r.name for r in results} >= {
        "temperature_x4",
        "rotate_query",
        "ablate_head",
        "ablate_layer0",
        "mask_winner",
        "window",
        "insert_distractor",
        "weight_vs_responsibility",
    }
    base = model.run(text)
    for r in results:
        row = r.as_row()
        for k, v in row.items():
            if isinstance(v, float):
                assert math.isfinite(v), (r.name, k)
        assert r.answer_before == base.answer and r.expected == base.expected
        assert r.p_expected_before == pytest.approx(base.probs[base.expected])
        assert r.weights_before.shape == r.weights_after.shape == (len(r.tokens_after),)
        assert r.max_weight_change == pytest.approx(
            np.max(np.abs(r.weights_after - r.weights_before))
        )
        assert 0.0 <= r.p_expected_after <= 1.0
        assert r.title == ex.EXPERIMENTS[r.name].title


def test_swap_experiment_is_payload_only(model):
    r = ex.run_experiment(model, "a=5; b=7; a=3; ?a", "swap_values")
    assert r.max_weight_change == 0.0 and r.output_change > 0.0


def test_weight_vs_responsibility_keeps_weight(model):
    r = ex.run_experiment(model, "a=5; b=7; a=3; ?a", "weight_vs_responsibility")
    assert r.details["top_weight_after"] == r.details["top_weight"]
    assert r.residual_change > 0.0


def test_unknown_experiment(model):
    with pytest.raises(ValueError, match="unknown experiment"):
        ex.run_experiment(model, TEXT, "nope")


def test_refusal_profile_shape(model):
    prof = ex.refusal_profile(model, n=120)
    for split in ("undefined", "defined"):
        weights = prof[split]["mean_weight"]
        assert set(weights) == set(TOKEN_KINDS)
        assert sum(weights.values()) == pytest.approx(1.0)
    # On defined names the retrieval head sits on values.
    assert prof["defined"]["mean_weight"]["value"] > 0.9


def test_rows_share_their_keys(model):
    rows = [r.as_row() for r in ex.run_all(model, "a=5; b=7; a=3; ?a")]
    assert len(rows) == len(ex.EXPERIMENTS)
    assert all(list(r) == list(rows[0]) for r in rows)


def test_run_records_are_read_only(model, base):
    with pytest.raises(ValueError):
        base.attention(1, 1)[0] = 0.5
    with pytest.raises(ValueError):
        base.residual(0)[0, 0] = 0.5


def test_weight_vs_contribution_counts(model):
    out = ex.weight_vs_contribution(model, n=30)
    assert set(out) == {f"L{a}H{b}" for a in range(2) for b in range(2)}
    for v in out.values():
        assert 0 <= v["differ"] <= 30 and v["share"] == v["differ"] / 30


# ------------------------------------------------------------------- causal map and patching


def test_binding_causal_map_names_the_retrieval_head():
    from engine.trained import causal

    model = trained.load("binding")
    program = "a=5; b=7; a=3; ?a"
    cmap = model.causal_map(program)
    run = model.run(program)
    assert cmap.answer == "3" and cmap.token_text == "3"  # the answer's earlier occurrence
    assert len(cmap.records) == model.n_layers * model.n_heads
    top = cmap.costliest(1)[0]
    assert (top.layer, top.head) == model.retrieval_head
    answer = model.answers.index("3")
    for r in cmap.records:
        single = run.intervene(trained.AblateHead(r.layer, r.head))
        assert r.effect == pytest.approx(np.log(single._p[answer]) - np.log(run._p[answer]))
        assert r.effect_prob == pytest.approx(single._p[answer] - run._p[answer])
    assert model.causal_map(program) == cmap
    with pytest.raises(causal.Cancelled):
        model.causal_map("a=5; b=7; ?b", cancel=lambda: True)


def test_a_models_map_cache_dies_with_it():
    """Another model object never reads a freed one's maps: CI once saw a model made after a
    freed one get its id(), and with it the freed model's ablation effects."""
    import gc

    from engine.trained import causal

    shipped = trained.load("binding")
    program = "a=5; b=7; a=3; ?a"
    other = trained.BindingModel({k: v * 0.5 for k, v in shipped.w.items()})
    halved = other.causal_map(program)
    assert other in causal._caches
    held = len(causal._caches)
    del other
    gc.collect()
    assert len(causal._caches) == held - 1  # the freed model's maps went with it
    again = trained.BindingModel({k: v * 0.5 for k, v in shipped.w.items()})
    said = []
    assert again.causal_map(program, progress=lambda f, m: said.append(m)) == halved
    assert "from the cache" not in said  # measured anew, not read from a dead model's entry


def test_binding_patching_moves_the_answer_with_the_retrieval_head():
    model = trained.load("binding")
    clean, corrupted = "a=5; b=7; a=3; ?a", "a=5; b=7; a=4; ?a"
    pmap = model.patching_map(clean, corrupted)
    assert (pmap.clean_answer, pmap.corrupted_answer) == ("3", "4")
    best = pmap.restoring(1)[0]
    patched = model.patch(clean, corrupted, best.layer, best.head)
    good, bad = model.answers.index("3"), model.answers.index("4")
    d = np.log(patched._p[good]) - np.log(patched._p[bad])
    span = pmap.difference_clean - pmap.difference_corrupted
    assert best.recovered == pytest.approx((d - pmap.difference_corrupted) / span)
    assert best.recovered > 0.5
    with pytest.raises(ValueError, match="same length"):
        model.patching_map(clean, "a=5; ?a")
    with pytest.raises(ValueError, match="changes the answer"):
        model.patching_map(clean, clean)
    with pytest.raises(ValueError, match="same length"):
        model.run(corrupted).intervene(trained.PatchHead(1, 1, np.zeros((3, model.d_head))))


def _share(model, pmap, run, good: str, bad: str) -> float:
    """The share of the clean-vs-corrupted difference a run brings back, computed by hand."""
    g, b = model.answers.index(good), model.answers.index(bad)
    d = np.log(run._p[g]) - np.log(run._p[b])
    return (d - pmap.difference_corrupted) / (pmap.difference_clean - pmap.difference_corrupted)


def test_patching_map_compares_the_answers_it_is_given_at_the_positions_it_is_given():
    model = trained.load("binding")
    clean, corrupted = "a=5; b=7; a=3; ?a", "a=5; b=7; a=4; ?a"
    c, k = model.run(clean), model.run(corrupted)
    changed = next(i for i, (x, y) in enumerate(zip(c.ids, k.ids, strict=True)) if x != y)
    last = k.query_position
    pmap = model.patching_map(clean, corrupted, answers=("3", "7"), positions=[last, changed])
    assert (pmap.clean_answer, pmap.corrupted_answer, pmap.positions) == ("3", "7", (changed, last))
    good, bad = model.answers.index("3"), model.answers.index("7")
    assert pmap.difference_clean == pytest.approx(np.log(c._p[good]) - np.log(c._p[bad]))
    assert pmap.difference_corrupted == pytest.approx(np.log(k._p[good]) - np.log(k._p[bad]))
    for r in pmap.records:  # every head against a single patch at those positions, by hand
        value = np.array(k.head(r.layer, r.head).all_outputs)
        value[[changed, last]] = c.head(r.layer, r.head).all_outputs[[changed, last]]
        single = k.intervene(trained.PatchHead(r.layer, r.head, value))
        assert r.recovered == pytest.approx(_share(model, pmap, single, "3", "7"))
        by_patch = model.patch(clean, corrupted, r.layer, r.head, positions=[changed, last])
        np.testing.assert_array_equal(by_patch.logits, single.logits)
    assert pmap.strongest(1)[0].recovered > 0.5  # the value's position carries the answer
    # Before the changed token the two runs are the same: patching there brings nothing back.
    before = model.patching_map(clean, corrupted, positions=range(changed))
    assert all(r.recovered == pytest.approx(0.0, abs=1e-6) for r in before.records)
    # Every position is the default.
    every = model.patching_map(clean, corrupted, positions=range(last + 1))
    default = model.patching_map(clean, corrupted)
    assert every.positions == tuple(range(last + 1)) and default.positions is None
    assert [r.recovered for r in every.records] == [r.recovered for r in default.records]
    assert (default.clean_answer, default.corrupted_answer) == ("3", "4")
    one_side = model.patching_map(clean, corrupted, answers=(None, "7"))
    assert (one_side.clean_answer, one_side.corrupted_answer) == ("3", "7")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"answers": "3"}, "answers must be a pair"),
        ({"answers": ("3", "4", "5")}, "answers must be a pair"),
        ({"answers": ("3", 4)}, "an answer must be a token's text"),
        ({"answers": ("3", "banana")}, "not one of the model's answers"),
        ({"answers": ("3", "3")}, "both answers compared are '3'"),
        ({"positions": []}, "positions is empty"),
        ({"positions": 3}, "must be a list of token positions"),
        ({"positions": "0 1"}, "must be a list of token positions"),
        ({"positions": [1, 2.0]}, r"must be token positions \(integers\), got 2.0"),
        ({"positions": [True]}, "must be token positions"),
        ({"positions": [-1]}, r"position -1 is out of range 0..\d+"),
        ({"positions": [99]}, r"position 99 is out of range 0..\d+ \(the query position"),
    ],
)
def test_patching_map_options_are_checked(options, message):
    model = trained.load("binding")
    with pytest.raises(ValueError, match=message):
        model.patching_map("a=5; b=7; a=3; ?a", "a=5; b=7; a=4; ?a", **options)


def test_binding_query_position():
    model = trained.load("binding")
    run = model.run("a=5; b=7; a=3; ?a")
    at = run.at_query(3)
    assert at.query_position == 3 and at.expected is None
    np.testing.assert_allclose(at.head(1, 1).weights, run.head(1, 1).all_weights[3])
    with pytest.raises(ValueError, match="backend must be one of"):
        model.run("a=5; ?a", backend="jax")


def test_the_maps_rank_heads_of_both_signs():
    from engine.trained.causal import CausalMap, HeadEffect, PatchEffect, PatchingMap

    def effect(head, value):
        return HeadEffect(0, head, 0.0, 1.0, value, value / 2, "x", "y")

    cmap = CausalMap(
        "t", "x", 0, "t", 0.5, tuple(effect(h, v) for h, v in enumerate([-0.2, 0.9, -0.5, 0.01]))
    )
    # A head whose removal raises the answer decides as much as one whose removal lowers it.
    assert [r.head for r in cmap.decisive(3)] == [1, 2, 0]
    assert [r.head for r in cmap.costliest(2)] == [2, 0]
    patches = [PatchEffect(0, h, v, v) for h, v in enumerate([0.54, -0.296, 0.1, 0.0])]
    pmap = PatchingMap("a", "b", "x", "y", 2.0, -1.0, tuple(patches))
    # The case: a head that brings back -0.296 of the difference is listed.
    assert [r.head for r in pmap.strongest(2)] == [0, 1]
    assert [r.head for r in pmap.restoring(2)] == [0, 2]
