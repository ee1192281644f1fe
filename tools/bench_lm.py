"""Benchmark: SmolLM2-135M in NumPy and torch beside Hugging Face transformers, at one thread.

    python -m tools.bench_lm                  # 7 repeats (3 for the 512-token text and the map)
    python -m tools.bench_lm --repeats 15
    python -m tools.bench_lm --no-map         # skip the causal maps (the slowest part)

Run it in a fresh process on a quiet machine (the load average is printed before and after):
the load time and the resident memory are this process's own. Everything runs at one thread:
NumPy's BLAS through engine.backends.blas_threads(1), torch through torch.set_num_threads(1).
The forwards are measured side by side, interleaved (ours in NumPy, ours on torch:cpu,
transformers), and the medians printed with the ratio ours / transformers.

- (a) a forward (``model.run``, records included) of a 16-token sentence and of a 512-token
  text; transformers' float32 forward of the same GGUF (``AutoModelForCausalLM.from_pretrained(
  folder, gguf_file=..., dtype=torch.float32)``, under ``torch.inference_mode``). Target: ours
  at most transformers'. Transformers is optional: ``pip install -e '.[compare]'``.
- (b) the weights' resident memory (the sum of their nbytes, and the RSS the load added).
  Target: at most 600 MB.
- (c) the causal map of all 270 heads on the 16-token sentence (the cache cleared before each
  repeat) against one forward. Target: at most 60 forwards.
- (d) an intervention at layer 20 and at layer 0 (a head's temperature: layers 20..29, or
  every layer, recomputed from the cached residual stream).
- (e) every head's copying scores and every token's loss beside the run they read.

    python -m tools.bench_lm --file PATH.gguf     # any model file, beside transformers
    python -m tools.bench_lm --random-gpt2        # a random GPT-2-small-sized file, written here

- (f) a model file's forward in NumPy and torch:cpu beside transformers' of the same file, at
  16 and 128 tokens: transformers computing the next-token logits at the last position only
  (``logits_to_keep=1``, as ours does) and at every position (its default). ``--random-gpt2``
  writes a GPT-2-small-sized file first (12 layers, 12 heads, 768 wide, 1024 positions, 50,257
  tokens: 124M parameters, float32) with ``engine.trained.random_gguf``. Target: ours within
  1.2x of transformers' last-position forward.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable

import psutil

MIB = 2**20
MB = 10**6
# 16 tokens; the superseded fact, so the intervention has something to move.
SENTENCE = "The meeting was on Monday. It moved to Friday. So the meeting is on"
LONG_TOKENS = 512
MEMORY_TARGET_MB = 600
MAP_TARGET_FORWARDS = 60
COMPARE_INSTALL = "pip install -e '.[compare]'  (transformers>=4.46, accelerate>=1.0)"


def interleaved_ms(
    fns: dict[str, Callable[[], object]], repeats: int, warm: bool = True
) -> dict[str, float]:
    """Median ms of each function, timed in turns (a, b, c, a, b, c, ...) after one warm call
    each, so a change in the machine's load falls on all of them alike."""
    for fn in fns.values() if warm else ():
        fn()  # warm: first-touch page faults, BLAS start-up, weights placed
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: 1000 * statistics.median(ts) for name, ts in times.items()}


def load_transformers(gguf_path):
    """(model, why not): transformers' float32 model of the same GGUF, or None and the reason."""
    try:
        import torch
        import transformers
    except ImportError as exc:
        return None, f"transformers is not installed ({exc.name}); {COMPARE_INSTALL}"
    kwargs = {"gguf_file": gguf_path.name}
    major = int(transformers.__version__.split(".")[0])
    kwargs["dtype" if major >= 5 else "torch_dtype"] = torch.float32
    transformers.logging.set_verbosity_error()
    try:
        # Its progress bars (tqdm, on stderr) would bury the figures.
        with contextlib.redirect_stderr(io.StringIO()):
            hf = transformers.AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), **kwargs)
    except Exception as exc:  # a missing accelerate, an unreadable file: say so, measure the rest
        return None, f"transformers could not load the GGUF: {exc!r}; {COMPARE_INSTALL}"
    return hf.eval(), f"transformers {transformers.__version__}"


def hf_forward(hf, ids, last_only: bool = False):
    import torch

    tensor = torch.tensor([ids])
    keep = {"logits_to_keep": 1} if last_only else {}

    def forward():
        with torch.inference_mode():
            return hf(input_ids=tensor, use_cache=False, **keep).logits[0, -1]

    return forward


def _ratio(a: float, b: float | None) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _forwards(model, hf, texts: dict[str, str], args) -> None:
    """(a): each text's forward in NumPy, torch:cpu and transformers, interleaved."""
    print("(a) a forward, medians (ms)      numpy   torch:cpu  transformers  numpy/tf  torch/tf")
    for label, text in texts.items():
        ids = model.encode(text)
        fns = {
            "numpy": lambda text=text: model.run(text),
            "torch": lambda text=text: model.run(text, backend="torch:cpu"),
        }
        if hf is not None:
            fns["hf"] = hf_forward(hf, ids)
        repeats = args.repeats if len(ids) <= 16 else args.long_repeats
        ms = interleaved_ms(fns, repeats)
        tf = ms.get("hf")
        print(
            f"    {label:>3} tokens (median of {repeats})      {ms['numpy']:7.1f} "
            f"{ms['torch']:10.1f} {tf if tf else float('nan'):13.1f} "
            f"{_ratio(ms['numpy'], tf):>9} {_ratio(ms['torch'], tf):>9}"
        )
        if hf is not None:
            ours = model.run(text).logits
            theirs = fns["hf"]().float().numpy()
            print(
                f"        same next token as transformers: {int(ours.argmax()) == int(theirs.argmax())}; "
                f"max |logit difference| {abs(ours - theirs).max():.1e}"
            )


def _maps(model, repeats: int) -> None:
    """(c): the causal map of every head against one forward, on each backend."""
    from engine.trained import causal

    for backend in ("numpy", "torch:cpu"):
        model.run(SENTENCE, backend=backend)  # warms the forward on this backend

        def cmap(backend=backend):
            causal.clear_cache(model)
            return model.causal_map(SENTENCE, backend=backend)

        ms = interleaved_ms(
            {"map": cmap, "one": lambda b=backend: model.run(SENTENCE, backend=b)},
            repeats,
            warm=False,  # the run above warmed the forward; a map is long enough
        )
        print(
            f"(c) causal map, 270 heads, 16 tokens, {backend}: {ms['map'] / 1000:.2f} s = "
            f"{ms['map'] / ms['one']:.0f} forwards of {ms['one']:.0f} ms "
            f"(median of {repeats}; target <= {MAP_TARGET_FORWARDS})"
        )


def _interventions(model, repeats: int) -> None:
    """(d): an edit at the top layer against one at the bottom, on each backend."""
    from engine import trained

    for backend in ("numpy", "torch:cpu"):
        run = model.run(SENTENCE, backend=backend)
        ms = interleaved_ms(
            {
                "20": lambda r=run: r.intervene(trained.HeadTemperature(20, 4, 2.0)),
                "0": lambda r=run: r.intervene(trained.HeadTemperature(0, 4, 2.0)),
            },
            repeats,
        )
        print(
            f"(d) intervention, {backend}: at layer 20 (layers 20..29 recomputed) "
            f"{ms['20']:.0f} ms, at layer 0 (every layer) {ms['0']:.0f} ms"
        )


def _copying(model, repeats: int) -> None:
    """(e): every head's copying scores and every token's loss on repeated random words,
    beside the run they read (issue 42: the scores should cost at most about a forward)."""
    from engine.trained.copying import head_scores
    from engine.trained.repeated_words import draw

    text = draw(model.encode, seed=0).text
    run = model.run(text)
    ms = interleaved_ms(
        {
            "run": lambda: model.run(text),
            "scores": lambda: head_scores(run),
            "losses": run.token_log_probs,
        },
        repeats,
    )
    print(
        f"(e) repeated words ({len(run.ids)} tokens): model.run {ms['run']:.0f} ms; "
        f"head_scores on that run {ms['scores']:.1f} ms ({ms['scores'] / ms['run']:.2f} of a run); "
        f"token_log_probs {ms['losses']:.1f} ms"
    )


GPT2_SMALL = {"n_layers": 12, "d_model": 768, "n_heads": 12, "context": 1024}
GPT2_VOCAB = 50257


def _file_forwards(path, args) -> None:
    """(f): a model file's forward beside transformers', interleaved, at one thread."""
    import torch

    from engine.trained.gguf_model import load_file

    t0 = time.perf_counter()
    model = load_file(path, name=path.stem)
    load_s = time.perf_counter() - t0
    params = sum(a.size for a in model.w.values())
    hf, hf_what = load_transformers(path)
    print(
        f"(f) {model.title}: {params / 1e6:.0f}M parameters held, loaded in {load_s:.1f} s; "
        f"{hf_what}; torch threads {torch.get_num_threads()}"
    )
    print("    tokens   numpy  torch:cpu  tf(last)  tf(all)  numpy/tf(last)  torch/tf(last)")
    words = (SENTENCE + " ") * 40
    for count in (16, 128):
        ids = model.encode(words)[:count]
        text = model.decode(ids)
        ids = model.encode(text)
        fns = {
            "numpy": lambda text=text: model.run(text),
            "torch": lambda text=text: model.run(text, backend="torch:cpu"),
        }
        if hf is not None:
            fns["last"] = hf_forward(hf, ids, last_only=True)
            fns["all"] = hf_forward(hf, ids)
        ms = interleaved_ms(fns, args.repeats if count <= 16 else args.long_repeats)
        last, every = ms.get("last", float("nan")), ms.get("all", float("nan"))
        print(
            f"    {len(ids):6} {ms['numpy']:7.1f} {ms['torch']:10.1f} {last:9.1f} {every:8.1f} "
            f"{_ratio(ms['numpy'], ms.get('last')):>15} {_ratio(ms['torch'], ms.get('last')):>15}"
        )


def _random_gpt2(folder):
    from pathlib import Path

    from engine.trained.random_gguf import write_random

    path = Path(folder) / "random-gpt2-small.gguf"
    if not path.is_file():
        write_random(path, "gpt2", vocab_size=GPT2_VOCAB, **GPT2_SMALL)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--long-repeats", type=int, default=3, help="512-token text and maps")
    parser.add_argument("--long-tokens", type=int, default=LONG_TOKENS)
    parser.add_argument("--no-map", action="store_true", help="skip the causal maps")
    parser.add_argument("--no-transformers", action="store_true", help="skip transformers")
    parser.add_argument("--file", help="(f) only: this GGUF file beside transformers")
    parser.add_argument(
        "--random-gpt2",
        nargs="?",
        const="/tmp",
        metavar="FOLDER",
        help="(f) only: write a random GPT-2-small-sized file in FOLDER (default /tmp) and use it",
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.long_repeats < 1 or not 16 <= args.long_tokens <= LONG_TOKENS:
        parser.error("--repeats and --long-repeats >= 1, --long-tokens in 16..512")
    if args.file or args.random_gpt2:
        return _only_file(args)

    from engine import trained
    from engine.backends import blas_threads, can_pin_blas_threads
    from engine.trained import smollm
    from tools.check_cuda import long_text

    installed, reason = smollm.status()
    if not installed:
        print(f"smollm2-135m: {reason}", file=sys.stderr)
        return 1
    print("load average before (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    t0 = time.perf_counter()
    model = trained.load("smollm2-135m")
    load_s = time.perf_counter() - t0
    rss1 = proc.memory_info().rss
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    weights = sum(a.nbytes for a in model.w.values())

    import torch

    torch.set_num_threads(1)
    hf, hf_what = (
        (None, "skipped") if args.no_transformers else load_transformers(smollm.find_gguf())
    )
    long = long_text(model, args.long_tokens)
    texts = {"16": SENTENCE, str(args.long_tokens): long}
    if len(model.encode(SENTENCE)) != 16:
        raise SystemExit(f"the sentence is {len(model.encode(SENTENCE))} tokens, not 16")

    print(f"SmolLM2-135M, {os.cpu_count()} cores, torch {torch.__version__}, {hf_what}")
    print(
        f"one thread: NumPy BLAS pinned per thread: {can_pin_blas_threads()}, "
        f"torch threads {torch.get_num_threads()}"
    )
    print(f"(b) load (read, dequantise, tokenizer, one probe run): {load_s:.2f} s")
    print(
        f"(b) weights held: {weights / MB:.0f} MB ({weights / MIB:.0f} MiB); resident after load "
        f"+{(rss1 - rss0) / MB:.0f} MB; peak RSS {peak / MB:.0f} MB; target <= {MEMORY_TARGET_MB} MB"
    )

    with blas_threads(1):
        _forwards(model, hf, texts, args)
        if not args.no_map:
            _maps(model, args.long_repeats)
        _interventions(model, args.repeats)
        _copying(model, args.repeats)
    run = model.run(SENTENCE)
    print(f"{run.text!r} -> {run.answer!r} ({run.probs[run.answer]:.3f})")
    # Other processes share the cores: the medians mean little without the load beside them.
    print("load average after (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


def _only_file(args) -> int:
    import torch

    from engine.backends import blas_threads

    torch.set_num_threads(1)
    from pathlib import Path

    path = Path(args.file) if args.file else _random_gpt2(args.random_gpt2)
    print("load average before (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    with blas_threads(1):
        _file_forwards(path, args)
    print("load average after (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
