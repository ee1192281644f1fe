"""Device check: both trained models on torch:cuda against NumPy, with pass/fail and times.

    python -m tools.check_cuda                    # on CUDA; says so and exits 0 where there is none
    python -m tools.check_cuda --device cpu       # the same checks on torch:cpu (a dry run)
    python -m tools.check_cuda --models binding   # one model only

For each model: a plain run, one run per kind of edit, a sample of the causal map, every head's
gradient from one backward pass with the attribution map built on it, and (SmolLM2) a 512-token
text. Every comparison is engine.tolerance.check_close: the golden value is the
NumPy forward in float64 (the binding model's own precision; float64 copies of SmolLM2's
weights), the reference the NumPy forward at the torch run's precision (float32 copies of the
binding weights; SmolLM2's own float32), the test the torch run. A check passes when the torch
run's error is at most five times the reference's own (floor 1e-5) and it gives the same answer.

Exit status: 0 when every check passed (or there is no CUDA device and --device cpu was not
asked for), 1 when one failed, 2 when the device was asked for and is missing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

MODELS = ("binding", "smollm2-135m")
BINDING_TEXT = "a=5; b=7; a=3; ?a"
MEETING = "The meeting was on Monday. It moved to Friday. So the meeting is on"  # 16 tokens
LONG_TOKENS = 512


@dataclass
class Check:
    model: str
    name: str
    passed: bool
    error: float  # the worst part's error ...
    bound: float  # ... and its bound (the part whose error / bound is largest)
    numpy_ms: float
    torch_ms: float
    note: str = ""

    def line(self) -> str:
        verdict = "pass" if self.passed else "FAIL"
        return (
            f"{verdict}  {self.model:<13} {self.name:<26} error {self.error:9.2e} <= "
            f"{self.bound:9.2e}   numpy {self.numpy_ms:8.1f} ms   torch {self.torch_ms:8.1f} ms"
            + (f"   {self.note}" if self.note else "")
        )


def cuda_status() -> tuple[bool, str]:
    """(present, what): whether torch sees a CUDA device, and its name or why not."""
    from engine import backends

    info = next(b for b in backends() if b.name == "torch" and b.device == "cuda")
    return info.available, info.reason


def _timed(fn: Callable[[], object], repeats: int):
    """(result, median ms): one warm call, then ``repeats`` timed calls."""
    result = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, 1000 * statistics.median(times)


def judge(model: str, name: str, test, golden, reference, numpy_ms, torch_ms, note="") -> Check:
    """``test``, ``golden``, ``reference``: ({part: array}, answer). Every part must pass
    check_close and the three answers must agree."""
    from engine.tolerance import check_close

    (t, t_answer), (g, g_answer), (r, r_answer) = test, golden, reference
    verdicts = {part: check_close(t[part], g[part], r[part]) for part in g}
    worst = max(verdicts.values(), key=lambda v: v.error / v.bound)
    notes = [note] if note else []
    if not t_answer == g_answer == r_answer:
        notes.append(f"answers differ: torch {t_answer!r}, golden {g_answer!r}")
    notes += [f"{part} failed" for part, v in verdicts.items() if not v.passed]
    passed = all(v.passed for v in verdicts.values()) and t_answer == g_answer == r_answer
    return Check(
        model, name, passed, worst.error, worst.bound, numpy_ms, torch_ms, "; ".join(notes)
    )


def run_parts(run) -> tuple[dict[str, np.ndarray], str]:
    """What a check compares of a run: the logits, every head's query-row weights, the final
    residual stream at the query; and the answer."""
    model = run.model
    weights = [
        run.head(layer, head).weights
        for layer in range(model.n_layers)
        for head in range(model.n_heads)
    ]
    parts = {
        "logits": run.logits,
        "weights": np.stack(weights),
        "residual": run.residual(model.n_layers)[run.query_position],
    }
    return parts, run.answer


def compare_runs(name, text, edits, model, golden_model, reference_model, backend, repeats):
    """One check of ``text`` under ``edits``: torch and the reference NumPy forward timed alike."""
    test, torch_ms = _timed(lambda: run_parts(model.run(text, edits, backend=backend)), repeats)
    reference, numpy_ms = _timed(lambda: run_parts(reference_model.run(text, edits)), repeats)
    golden = run_parts(golden_model.run(text, edits))
    return judge(model.name, name, test, golden, reference, numpy_ms, torch_ms)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    return z - (z.max() + np.log(np.exp(z - z.max()).sum()))


def compare_causal_map(model, golden_model, reference_model, text, backend, sample: int):
    """The causal map on torch (every head, in the model's own batched passes when it has them)
    against single ablations through the edit API in golden and reference NumPy, on a sample
    of heads (every head when ``sample`` is 0)."""
    from engine import trained
    from engine.trained import causal

    causal.clear_cache(model)
    t0 = time.perf_counter()
    torch_run = model.run(text, backend=backend)
    cmap = causal.causal_map(torch_run)
    torch_ms = 1000 * (time.perf_counter() - t0)
    index, _ = causal.answer_id(torch_run, None)
    records = {(r.layer, r.head): r for r in cmap.records}
    if sample:
        heads = {(r.layer, r.head) for r in cmap.decisive(sample // 2)}
        heads |= {(r.layer, r.head) for r in cmap.heaviest(sample - sample // 2)}
        heads |= {(0, 0), (model.n_layers - 1, model.n_heads - 1)}
    else:
        heads = set(records)
    heads = sorted(heads)

    def singles(m):
        run = m.run(text)
        base = _log_softmax(run.logits)[index]
        effects, weights, answers = [], [], []
        for layer, head in heads:
            cut = run.intervene(trained.AblateHead(layer, head))
            effects.append(_log_softmax(cut.logits)[index] - base)
            weights.append(run.head(layer, head).weights[cmap.token])
            answers.append(cut.answer)
        return {"effect": np.array(effects), "weight": np.array(weights)}, tuple(answers)

    t0 = time.perf_counter()
    reference = singles(reference_model)
    numpy_ms = 1000 * (time.perf_counter() - t0)
    golden = singles(golden_model)
    test = (
        {
            "effect": np.array([records[h].effect for h in heads]),
            "weight": np.array([records[h].weight for h in heads]),
        },
        tuple(records[h].ablated_answer for h in heads),
    )
    name = f"causal map ({len(heads)} of {len(records)})"
    note = f"torch: the whole map; numpy: {len(heads)} single ablations"
    return judge(model.name, name, test, golden, reference, numpy_ms, torch_ms, note)


def compare_gradients(model, golden_model, reference_model, text, backend):
    """Every head's gradient of log P(answer) from one backward pass (engine.trained.backward,
    written once against the array namespace), and the attribution map's estimates built on
    it, on torch against golden and reference NumPy."""
    from engine.trained.attribution import attribution_map
    from engine.trained.backward import log_prob_seed

    plain = golden_model.run(text)
    index = int(np.argmax(plain.logits))

    def parts(m, backend=None):
        run = m.run(text) if backend is None else m.run(text, backend=backend)
        gradient = m.head_gradients(run, log_prob_seed(run.logits, index))
        estimates = [r.estimate for r in attribution_map(run, verify=0).records]
        return {"gradient": np.asarray(gradient), "estimate": np.array(estimates)}, run.answer

    test, torch_ms = _timed(lambda: parts(model, backend), 1)
    reference, numpy_ms = _timed(lambda: parts(reference_model), 1)
    golden = parts(golden_model)
    name = f"head gradients ({len(plain.ids)} tokens)"
    return judge(model.name, name, test, golden, reference, numpy_ms, torch_ms)


# ----------------------------------------------------------------------------------- binding


def binding_edits(model) -> dict[str, tuple]:
    from engine import trained

    source = model.run("a=5; b=7; a=4; ?a")
    return {
        "swap values": (trained.SwapValues(1, 1, 3, 11),),
        "replace key": (trained.ReplaceKey(1, 1, 3, 11),),
        "scale key": (trained.ScaleKey(1, 1, 3, 4.0),),
        "scale value": (trained.ScaleValue(0, 0, 11, 3.0),),
        "mask a position": (trained.MaskPosition(None, None, 11),),
        "window": (trained.Window(1, None, 4),),
        "temperature": (trained.HeadTemperature(1, 1, 3.0),),
        "rotate the query": (trained.RotateQuery(1, 1, 40.0),),
        "ablate": (trained.AblateHead(0, 1),),
        "patch": (trained.PatchHead(1, 1, source.head(1, 1).all_outputs),),
    }


def check_binding(backend: str, repeats: int) -> Iterator[Check]:
    """The binding model: golden NumPy float64 (the model), reference NumPy on float32 copies."""
    from engine import trained

    model = trained.load("binding")
    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    single = trained.BindingModel(arrays, dtype=np.float32)
    for name, edits in ({"plain run": ()} | binding_edits(model)).items():
        yield compare_runs(name, BINDING_TEXT, edits, model, model, single, backend, repeats)
    yield compare_causal_map(model, model, single, BINDING_TEXT, backend, sample=0)
    yield compare_gradients(model, model, single, BINDING_TEXT, backend)


# ----------------------------------------------------------------------------------- SmolLM2


def smollm_edits(model, text: str) -> dict[str, tuple]:
    from engine import trained

    day = model.encode(text).index(model.encode(" Monday")[0])
    source = model.run(text.replace("Friday", "Tuesday"))
    return {
        "swap values": (trained.SwapValues(13, 8, day, 1),),
        "replace key": (trained.ReplaceKey(13, 8, day, 2),),
        "scale key": (trained.ScaleKey(13, 8, day, 3.0),),
        "scale value": (trained.ScaleValue(13, 7, day, 0.0),),
        "mask a position": (trained.MaskPosition(None, None, day),),
        "window": (trained.Window(13, None, 3),),
        "temperature": (trained.HeadTemperature(20, 4, 3.0),),
        "rotate the query": (trained.RotateQuery(13, 8, -30.0),),
        "ablate": (trained.AblateHead(13, 8),),
        "patch": (trained.PatchHead(13, 8, source.head(13, 8).all_outputs),),
    }


def double_precision(model):
    """SmolLM2 on float64 copies of the same weights (about 1.1 GB): the golden forward."""
    from engine.trained import smollm

    weights = {key: value.astype(np.float64) for key, value in model.w.items()}
    return smollm.SmolLM(model.cfg, weights, model.tokenizer)


def long_text(model, tokens: int) -> str:
    """A text of ``tokens`` tokens (cut at a token boundary): a few facts, repeated."""
    facts = "The meeting was on Monday. It moved to Friday. The key is in the box. "
    ids = model.encode(facts * (tokens // 8))[:tokens]
    text = model.decode(ids)
    if len(model.encode(text)) != tokens:
        raise ValueError(f"the cut text re-encodes to {len(model.encode(text))} tokens")
    return text


def check_smollm(
    backend: str,
    repeats: int,
    long_tokens: int = LONG_TOKENS,
    sample: int = 4,
    double=None,
    causal_map: bool = True,
) -> Iterator[Check]:
    """SmolLM2: golden NumPy on float64 copies of the weights, reference NumPy float32 (the
    model's own precision, as torch runs it). `causal_map=False` leaves out the whole map on
    the device (the suite's dry run: its map on torch:cpu is checked in tests/engine)."""
    from engine import trained

    model = trained.load("smollm2-135m")
    double = double if double is not None else double_precision(model)
    n = len(model.encode(MEETING))
    cases = {f"plain run ({n} tokens)": ()} | smollm_edits(model, MEETING)
    for name, edits in cases.items():
        yield compare_runs(name, MEETING, edits, model, double, model, backend, repeats)
    if causal_map:
        yield compare_causal_map(model, double, model, MEETING, backend, sample)
    yield compare_gradients(model, double, model, MEETING, backend)
    text = long_text(model, long_tokens)
    name = f"plain run ({len(model.encode(text))} tokens)"
    yield compare_runs(name, text, (), model, double, model, backend, 1)


# ----------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None, *, double=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated")
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per check (median)")
    parser.add_argument("--long-tokens", type=int, default=LONG_TOKENS)
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = sorted(set(models) - set(MODELS))
    if unknown or args.repeats < 1 or not 16 <= args.long_tokens <= LONG_TOKENS:
        parser.error(f"--models from {MODELS}, --repeats >= 1, --long-tokens in 16..512")

    from engine.backends import EngineUnavailable, resolve

    try:
        resolve("torch", "cpu")
    except EngineUnavailable as exc:
        print(f"torch is not installed: {exc}")
        return 0 if args.device == "cuda" else 2
    present, what = cuda_status()
    if args.device == "cuda" and not present:
        print(
            f"no CUDA device here ({what}): nothing to check (run with --device cpu for a dry run)"
        )
        return 0
    import torch

    backend = f"torch:{args.device}"
    where = what if args.device == "cuda" else f"CPU (dry run), torch {torch.__version__}"
    print(f"checking {', '.join(models)} on {backend}: {where}")
    checks: list[Check] = []
    if "binding" in models:
        for c in check_binding(backend, args.repeats):
            print(c.line(), flush=True)
            checks.append(c)
    if "smollm2-135m" in models:
        from engine.trained import smollm

        installed, reason = smollm.status()
        if not installed:
            print(f"skip  smollm2-135m: {reason}")
        else:
            for c in check_smollm(backend, args.repeats, args.long_tokens, double=double):
                print(c.line(), flush=True)
                checks.append(c)
    failed = [c for c in checks if not c.passed]
    print(f"{len(checks) - len(failed)} of {len(checks)} checks passed on {backend}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
