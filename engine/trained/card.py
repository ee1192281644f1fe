"""The binding model's card: every figure measured with the NumPy forward on a fixed held-out set.

``measure(model)`` recomputes the figures from the weights; the training script writes them to
``assets/models/binding.json`` (and a Markdown rendering), and the tests call ``measure`` again
on the shipped file and compare.

Definitions (all at the question position, i.e. the asked name at the end):

- *value hit*: the head's largest weight is on the value token of the definition that answers
  the question (the latest definition of the asked name). *span hit*: the largest weight is on
  any of that definition's four tokens (name, "=", value, ";"). Both over defined questions.
- *retrieval head*: the head with the highest value-hit rate; ties go to the larger mean weight
  on the answer's value token, then to the lower (layer, head).
- *ablation drop*: accuracy minus accuracy with that head's output zeroed at every position.
- *refusal profile*: the retrieval head's weight summed per token kind (first token, names,
  "=", values, ";", "?", and the question position itself), averaged over programs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import binding_task as task
from .binding import HELDOUT_SEED, HELDOUT_SIZE, choose_retrieval_head, head_stats
from .edits import AblateHead

KINDS = ("plain", "rebound", "undefined")
TOKEN_KINDS = ("first", "name", "=", "value", ";", "?", "question")


def heldout() -> list[task.Program]:
    return task.dataset(HELDOUT_SEED, HELDOUT_SIZE)


def _accuracy(programs, probs) -> dict:
    pred = probs.argmax(1)
    ans = np.array([task.ANSWER_ID[p.answer] for p in programs])
    ok = pred == ans
    out = {"all": {"n": len(programs), "correct": int(ok.sum()), "accuracy": float(ok.mean())}}
    for kind in KINDS:
        sel = np.array([p.kind == kind for p in programs])
        n = int(sel.sum())
        c = int(ok[sel].sum())
        out[kind] = {"n": n, "correct": c, "accuracy": c / n if n else float("nan")}
    return out


def weight_by_kind(programs, weights) -> dict[str, float]:
    """Mean (over programs) of the weight summed over each token kind."""
    totals = dict.fromkeys(TOKEN_KINDS, 0.0)
    for p, w in zip(programs, weights, strict=True):
        for pos, x in enumerate(w):
            totals[task.token_kind(p.tokens, pos)] += float(x)
    return {k: v / max(len(programs), 1) for k, v in totals.items()}


def top_by_kind(programs, weights) -> dict[str, float]:
    """Share of programs whose top weight falls on each token kind."""
    counts = dict.fromkeys(TOKEN_KINDS, 0)
    for p, w in zip(programs, weights, strict=True):
        counts[task.token_kind(p.tokens, int(np.argmax(w)))] += 1
    return {k: v / max(len(programs), 1) for k, v in counts.items()}


def refusal(programs, rows, head) -> dict:
    ws = rows[head]
    und = [i for i, p in enumerate(programs) if p.kind == "undefined"]
    dfn = [i for i, p in enumerate(programs) if p.kind != "undefined"]
    return {
        "head": list(head),
        "undefined": {
            "n": len(und),
            "mean_weight": weight_by_kind([programs[i] for i in und], [ws[i] for i in und]),
            "top_share": top_by_kind([programs[i] for i in und], [ws[i] for i in und]),
        },
        "defined": {
            "n": len(dfn),
            "mean_weight": weight_by_kind([programs[i] for i in dfn], [ws[i] for i in dfn]),
            "top_share": top_by_kind([programs[i] for i in dfn], [ws[i] for i in dfn]),
        },
    }


def measure(model, programs=None) -> dict:
    """Every figure of the card, from the model's weights (NumPy forward)."""
    programs = heldout() if programs is None else programs
    probs, rows = model.forward_batch(programs)
    acc = _accuracy(programs, probs)
    stats = head_stats(programs, rows)
    heads = {}
    for (layer, hd), s in stats.items():
        ab = _accuracy(programs, model.forward_batch(programs, [AblateHead(layer, hd)])[0])
        heads[f"L{layer}H{hd}"] = {
            **s,
            "value_hit_rate": s["value_hits"] / s["defined"],
            "span_hit_rate": s["span_hits"] / s["defined"],
            "ablated_accuracy": ab["all"]["accuracy"],
            "ablated_by_kind": {k: ab[k]["accuracy"] for k in KINDS},
            "ablation_drop": acc["all"]["accuracy"] - ab["all"]["accuracy"],
        }
    layers = {}
    for layer in range(model.n_layers):
        edits = [AblateHead(layer, h) for h in range(model.n_heads)]
        ab = _accuracy(programs, model.forward_batch(programs, edits)[0])
        layers[f"L{layer}"] = {
            "ablated_accuracy": ab["all"]["accuracy"],
            "ablated_by_kind": {k: ab[k]["accuracy"] for k in KINDS},
        }
    rh = choose_retrieval_head(stats)
    return {
        "heldout": {"seed": HELDOUT_SEED, "size": len(programs)},
        "accuracy": acc,
        "heads": heads,
        "layer_ablations": layers,
        "retrieval_head": list(rh),
        "refusal_profile": refusal(programs, rows, rh),
    }


def card_dict(model, training: dict, figures: dict) -> dict:
    n_params = int(sum(a.size for a in model.w.values()))
    return {
        "name": model.name,
        "title": model.title,
        "task": {
            "grammar": "program := (NAME '=' VALUE ';'){1..6} '?' NAME ; whitespace ignored",
            "semantics": "the latest definition of the asked name wins; never defined -> 'none'",
            "model_input": "'<bos>' then the program's tokens; read at the last position",
            "training_definitions": [task.TRAIN_MIN_DEFS, task.MAX_DEFS],
            "generator": "answer's definition position uniform; p_undefined 0.2; p_rebind 0.35",
            "names": list(task.NAMES),
            "values": list(task.VALUES),
            "answers": list(task.ANSWERS),
            "vocabulary": list(task.VOCAB),
        },
        "architecture": {
            "kind": "decoder-only, attention-only (no MLP), pre-LayerNorm, learned positions",
            "d_model": model.d_model,
            "n_layers": model.n_layers,
            "n_heads": model.n_heads,
            "d_head": model.d_head,
            "max_len": model.max_len,
            "projection_bias": False,
            "parameters": n_params,
            "weights_file": "binding.npz (float32)",
        },
        "training": training,
        "figures": figures,
        "definitions": __doc__.split("Definitions", 1)[1].strip(),
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_markdown(card: dict) -> str:
    f = card["figures"]
    acc = f["accuracy"]
    a = card["architecture"]
    t = card["training"]
    rh = "L{}H{}".format(*f["retrieval_head"])
    lines = [
        f"# {card['title']}",
        "",
        "A small transformer trained to answer `a=5; b=7; a=3; ?a` with `3`: the latest "
        "definition of the asked name, or `none` when the name was never defined.",
        "",
        "## Task",
        "",
        f"- Grammar: `{card['task']['grammar']}`",
        f"- {card['task']['semantics']}; input: {card['task']['model_input']}.",
        f"- Names ({len(card['task']['names'])}): " + ", ".join(card["task"]["names"]),
        f"- Values ({len(card['task']['values'])}): " + ", ".join(card["task"]["values"]),
        f"- Training programs: {card['task']['training_definitions'][0]} to "
        f"{card['task']['training_definitions'][1]} definitions; {card['task']['generator']}.",
        "",
        "## Architecture",
        "",
        f"{a['kind']}; d_model {a['d_model']}, {a['n_layers']} layers x {a['n_heads']} heads of "
        f"d_head {a['d_head']}, {a['max_len']} positions, {a['parameters']} parameters.",
        "",
        "## Training",
        "",
        f"Seed {t['seed']}, {t['steps']} steps of batch {t['batch']}, {t['optimizer']}, "
        f"{t['schedule']}, torch {t['torch']} on CPU ({t['threads']} threads): {t['seconds']} s.",
        "",
    ]
    lines += _seeds_tried(t)
    lines += [
        f"## Held-out accuracy (seed {f['heldout']['seed']}, {f['heldout']['size']} programs)",
        "",
        "| split | programs | accuracy |",
        "|---|---|---|",
    ]
    for k in ("all", *KINDS):
        lines.append(f"| {k} | {acc[k]['n']} | {_pct(acc[k]['accuracy'])} |")
    lines += [
        "",
        "## Heads",
        "",
        "| head | value hit | span hit | mean weight on value | accuracy ablated | drop |",
        "|---|---|---|---|---|---|",
    ]
    for name, h in f["heads"].items():
        lines.append(
            f"| {name} | {_pct(h['value_hit_rate'])} | {_pct(h['span_hit_rate'])} | "
            f"{h['mean_value_weight']:.3f} | {_pct(h['ablated_accuracy'])} | "
            f"{_pct(h['ablation_drop'])} |"
        )
    for name, la in f["layer_ablations"].items():
        lines.append(f"\nAblating every head of {name}: {_pct(la['ablated_accuracy'])}.")
    lines += _where_it_looks(rh, f["refusal_profile"])
    lines += ["", "## Definitions", "", card["definitions"], ""]
    return "\n".join(lines)


def _seeds_tried(t: dict) -> list[str]:
    """The training section's seeds tried and its notes, as card lines."""
    lines = []
    if "acceptance" in t:
        lines += [f"A seed is accepted when {t['acceptance']}. Seeds tried:", ""]
        for s in t.get("seeds_tried", []):
            lines.append(
                f"- seed {s['seed']}: validation {_pct(s['validation_accuracy'])}, retrieval "
                f"head L{s['retrieval_head'][0]}H{s['retrieval_head'][1]}, one-head ablation "
                f"drop {_pct(s['retrieval_ablation_drop'])}, {s['seconds']} s: {s['verdict']}"
            )
        lines.append("")
    for key in ("seconds_note", "heldout_overlap"):
        if key in t:
            lines += [f"Note: {t[key]}.", ""]
    return lines


def _where_it_looks(rh: str, rp: dict) -> list[str]:
    """The retrieval head's mean weight per token kind, as card lines."""
    lines = [
        "",
        f"Retrieval head: **{rh}**.",
        "",
        f"## Where {rh} looks (mean weight per token kind)",
        "",
        "| token kind | undefined name | defined name | top weight there (undefined) |",
        "|---|---|---|---|",
    ]
    for k in TOKEN_KINDS:
        lines.append(
            f"| {k} | {rp['undefined']['mean_weight'][k]:.3f} | "
            f"{rp['defined']['mean_weight'][k]:.3f} | {_pct(rp['undefined']['top_share'][k])} |"
        )
    return lines


def write_card(weights: Path, training: dict, out: Path) -> dict:
    from .binding import BindingModel, load_arrays

    model = BindingModel(load_arrays(weights))
    figures = measure(model)
    card = card_dict(model, training, figures)
    (out / "binding.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / "binding.md").write_text(render_markdown(card), encoding="utf-8")
    return card
