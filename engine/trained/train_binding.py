"""Train the binding model on CPU and write its weights and model card.

    python -m engine.trained.train_binding                 # the shipped run
    python -m engine.trained.train_binding --steps 20 --out /tmp/x --no-card

Deterministic for a given seed, thread count and torch build (torch CPU, one data stream per
seed): another ``--threads`` changes the reduction order and so the weights. Seeds are tried in order
until one is accepted: validation accuracy at least ``--target`` (two-layer attention-only
models sometimes sit on a plateau) and a retrieval head whose ablation alone costs at least
``--min-drop`` of validation accuracy. The second rule is there for the lab: some seeds split
retrieval redundantly over both layer-1 heads, so that no one-head intervention changes the
answer; the card records every seed tried and why it was rejected.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from . import binding_task as task

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "assets" / "models"
VALIDATION_SEED = 987_654  # training-time check only; the card uses binding.HELDOUT_SEED
TRAIN_DATA_OFFSET = 1_000


def _batch(rng, size):
    import torch

    ids, qpos, ans = task.encode_batch([task.generate(rng) for _ in range(size)])
    return torch.as_tensor(ids), torch.as_tensor(qpos), torch.as_tensor(ans)


def accuracy(model, programs) -> float:
    import torch

    ids, qpos, ans = task.encode_batch(programs)
    with torch.no_grad():
        logits = model(torch.as_tensor(ids))
    pred = logits[torch.arange(len(programs)), torch.as_tensor(qpos)].argmax(-1).numpy()
    return float(np.mean(pred == ans))


def train(seed: int, steps: int, batch: int = 128, lr: float = 3e-3, log=print):
    """(model, seconds, validation accuracy) for one seed."""
    import torch

    from .binding_torch import BindingModel

    torch.manual_seed(seed)
    model = BindingModel()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(steps, 1))
    rng = np.random.default_rng(seed + TRAIN_DATA_OFFSET)
    val = task.dataset(VALIDATION_SEED, 1000)
    start = time.perf_counter()
    model.train()
    for step in range(steps):
        ids, qpos, ans = _batch(rng, batch)
        logits = model(ids)[torch.arange(len(ids)), qpos]
        loss = torch.nn.functional.cross_entropy(logits, ans)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if log and (step + 1) % max(steps // 10, 1) == 0:
            model.eval()
            log(
                f"seed {seed} step {step + 1}/{steps} loss {loss.item():.4f} "
                f"val {accuracy(model, val):.4f} ({time.perf_counter() - start:.0f} s)"
            )
            model.train()
    model.eval()
    return model, time.perf_counter() - start, accuracy(model, val)


def retrieval_drop(model, programs) -> tuple[list[int], float]:
    """(retrieval head, accuracy drop when it alone is ablated), measured with the NumPy forward."""
    from .binding import BindingModel
    from .card import measure

    figures = measure(BindingModel(model.to_arrays()), programs)
    head = figures["retrieval_head"]
    return head, figures["heads"]["L{}H{}".format(*head)]["ablation_drop"]


def save_weights(model, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **model.to_arrays())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds to try")
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--target", type=float, default=0.98)
    parser.add_argument("--min-drop", type=float, default=0.3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-card", action="store_true", help="write the weights only")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    tried = []
    val = task.dataset(VALIDATION_SEED, 1000)
    for seed in (int(s) for s in args.seeds.split(",")):
        model, seconds, acc = train(seed, args.steps, args.batch, args.lr)
        head, drop = retrieval_drop(model, val)
        ok = acc >= args.target and drop >= args.min_drop
        verdict = (
            "accepted"
            if ok
            else (
                "below the accuracy target"
                if acc < args.target
                else f"retrieval split over heads (one-head ablation drop {drop:.3f})"
            )
        )
        tried.append(
            {
                "seed": seed,
                "validation_accuracy": acc,
                "retrieval_head": head,
                "retrieval_ablation_drop": drop,
                "seconds": round(seconds, 1),
                "verdict": verdict,
            }
        )
        print(f"seed {seed}: validation accuracy {acc:.4f} in {seconds:.0f} s; {verdict}")
        if ok:
            break
    weights = args.out / "binding.npz"
    save_weights(model, weights)
    training = {
        "seed": seed,
        "seeds_tried": tried,
        "acceptance": f"validation accuracy >= {args.target} and retrieval-head ablation "
        f"drop >= {args.min_drop} (validation set of 1000, seed {VALIDATION_SEED})",
        "steps": args.steps,
        "batch": args.batch,
        "optimizer": "AdamW (weight decay 0.01)",
        "schedule": f"one-cycle, max lr {args.lr}",
        "loss": "cross-entropy at the question position over the answer vocabulary",
        "threads": args.threads,
        "torch": torch.__version__,
        "seconds": round(seconds, 1),
        "validation_seed": VALIDATION_SEED,
        "train_data_seed": seed + TRAIN_DATA_OFFSET,
    }
    (args.out / "training.json").write_text(json.dumps(training, indent=2) + "\n")
    if not args.no_card:
        from .card import write_card

        write_card(weights, training, args.out)
    print(f"wrote {weights}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
