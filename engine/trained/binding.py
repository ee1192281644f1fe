"""The shipped binding model in NumPy or torch: load it, run a program, intervene on any head.

Every head's attention goes through ``engine.attention`` (one call per head and layer, batched
over programs of equal length), with an explicit bool mask: the causal triangle plus whatever
the edits hide. The forward works in float64 on the float32 weights. It is written once against
the arrays' namespace (``array_api_compat``), so ``run(..., backend="torch:cpu")`` or
``"torch:cuda"`` runs the same lines in torch (float64 there too; float32 on Apple's MPS, which
has no float64); the masks, the edits' bookkeeping and the records stay in NumPy on the host.

>>> from engine import trained
>>> model = trained.load("binding")
>>> model.run("a=5; b=7; a=3; ?a").answer
'3'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import attention_lab_assets

from ..backends import Backend, host
from ..core import attention, softmax
from ..wording import N_
from . import binding_task as task
from .edits import Edit, EditedHead, edit_head, turn_query_rows
from .model_base import TrainedModel
from .norms import layer_norm
from .placed import PlacedWeights
from .runs import HeadRecord, Pass, Run, check_query, read_only

PROBE_SEED = 31_337  # small fixed set for measuring the retrieval head at load
PROBE_SIZE = 96
HELDOUT_SEED = 20_261_201  # the card's held-out set
HELDOUT_SIZE = 4000


def models_dir() -> Path:
    """The shipped weights' folder (the package data `attention_lab_assets/models`)."""
    folder = attention_lab_assets.folder() / attention_lab_assets.MODELS
    if not (folder / "binding.npz").is_file():
        raise FileNotFoundError(f"binding.npz not found in {folder}")
    return folder


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x.clone()


class BindingModel(TrainedModel):
    """The binding model, in NumPy or torch (CPU or CUDA). Weights are read-only float64
    (float32 when asked for, as a low-precision reference)."""

    name = "binding"
    # Marked for the catalogue: the page shows them in the student's language.
    title = N_("Variable binding (2-layer attention-only transformer)")
    about = N_(
        "A small transformer this project trained to answer questions about definitions "
        "(a=5; b=7; a=3; ?a gives 3). Every figure on its model card is recomputed by the tests "
        "from the shipped weights."
    )

    def __init__(
        self, arrays: dict[str, np.ndarray], card: dict[str, Any] | None = None, dtype=np.float64
    ):
        # float64 is the model; float32 (``dtype=np.float32``) is the tests' low-precision
        # reference, the yardstick of engine.tolerance.check_close.
        super().__init__()
        self.w = {}
        for key, value in arrays.items():
            a = np.array(value, dtype=dtype)
            a.setflags(write=False)
            self.w[key] = a
        self.card = card or {}
        self.n_layers = sum(1 for k in self.w if k.startswith("wq"))
        self.d_model = self.w["embed"].shape[1]
        arch = self.card.get("architecture", {})
        self.d_head = int(arch.get("d_head", 32))
        self.n_heads = self.w["wq0"].shape[1] // self.d_head
        self.names: tuple[str, ...] = task.NAMES
        self.values: tuple[str, ...] = task.VALUES
        self.answers: tuple[str, ...] = task.ANSWERS
        self.max_len = self.w["pos"].shape[0]
        self.examples: dict[str, str] = dict(EXAMPLES)
        # Measured, not read from the card: the head whose top weight lands on the answer's
        # value most often on a small fixed probe set (the card's rule, see card.py).
        self.probe_stats = self._probe_heads()
        self.retrieval_head: tuple[int, int] = choose_retrieval_head(self.probe_stats)
        # What was measured to pick it, in words (the page names the head by this, not a role).
        self.retrieval_basis = (
            "the head whose top weight at the question lands on the asked value most often, "
            f"over a fixed probe set of {PROBE_SIZE} programs"
        )

    # ------------------------------------------------------------------------------ forward
    def _place(self, be: Backend) -> PlacedWeights:
        """The weights on ``be``: float64 (the NumPy arrays themselves; torch on the CPU wraps
        them without a copy, CUDA gets one copy). Apple's MPS has no float64: a float32 copy."""
        return PlacedWeights.of(self.w, be)

    def _forward(
        self,
        placed: PlacedWeights,
        ids: np.ndarray,
        edits: tuple[Edit, ...] = (),
        start: int = 0,
        resid: list[np.ndarray] | None = None,
        heads: dict | None = None,
        query: int | None = None,
    ) -> Pass:
        """Forward for ids (B, n) of one length on the ``placed`` weights; the records and
        logits are for position ``query`` (default: the last, the question).

        With ``start`` > 0, ``resid[:start+1]`` and the layers below ``start`` are reused. The
        arithmetic runs on the placed weights' backend through the arrays' own namespace; the
        masks, the edits' bookkeeping and every record stay in NumPy on the host."""
        w = placed.w
        qpos = ids.shape[1] - 1 if query is None else query
        if start == 0:
            x = w["embed"][placed.index(ids)] + w["pos"][: ids.shape[1]]
            resid, heads = [host(x)], {}
        else:
            resid = list(resid[: start + 1])
            heads = {lh: r for lh, r in heads.items() if lh[0] < start}
            x = placed.put(resid[start])
        for layer in range(start, self.n_layers):
            x = x + self._attention_layer(placed, x, layer, edits, qpos, heads)
            resid.append(host(x))
        hf = layer_norm(x[:, qpos], w["ln_f.weight"], w["ln_f.bias"])
        logits = hf @ w["unembed.weight"] + w["unembed.bias"]
        return Pass(resid, heads, host(logits), query=qpos)

    def _attention_layer(self, placed: PlacedWeights, x, layer: int, edits, qpos: int, heads: dict):
        """What layer ``layer``'s heads add to the residual stream x (B, n, d_model), head by
        head; each head's record goes into ``heads``."""
        w, xp = placed.w, placed.backend.xp
        b, n, _ = x.shape
        h = layer_norm(x, w[f"ln{layer}.weight"], w[f"ln{layer}.bias"])
        q = xp.reshape(h @ w[f"wq{layer}"], (b, n, self.n_heads, self.d_head))
        k = xp.reshape(h @ w[f"wk{layer}"], (b, n, self.n_heads, self.d_head))
        v = xp.reshape(h @ w[f"wv{layer}"], (b, n, self.n_heads, self.d_head))
        delta = xp.zeros_like(x)
        for hd in range(self.n_heads):
            # The head's own copies: its edits change them in place.
            own = (_copy(q[:, :, hd]), _copy(k[:, :, hd]), _copy(v[:, :, hd]))
            heads[(layer, hd)], contribution = self._head(placed, *own, layer, hd, edits, qpos)
            delta += contribution
        return delta

    def _head(self, placed: PlacedWeights, q, k, v, layer: int, hd: int, edits, qpos: int):
        """One head on q, k, v (B, n, d_head) with its edits: (its record, what it adds to the
        residual stream (B, n, d_model))."""
        n = q.shape[1]
        edited = edit_head(edits, layer, hd, k, v, np.tril(np.ones((n, n), dtype=bool)), qpos)
        # Rows other than the question may lose every key (a masked first token): they output
        # zero rather than failing, which is torch's safe softmax.
        opts = {"temperature": edited.temperature, "fully_masked": "zero"}
        opts |= {"mask": placed.put(edited.legal)} | placed.attention_options
        res = attention(q, k, v, **opts)
        if edited.degrees:
            turn_query_rows(q, k, res.weights, qpos, edited.degrees, placed.put)
            res = attention(q, k, v, **opts)
        out = _copy(res.output)
        if edited.output is not None:
            out[:] = placed.put(edited.output)
        if edited.ablated:
            out[:] = 0.0
        contribution = out @ placed.w[f"wo{layer}"][hd * self.d_head : (hd + 1) * self.d_head]
        return _record(layer, hd, q, edited, res, out, contribution, qpos), contribution

    def forward_batch(self, programs, edits=(), backend: str = "numpy") -> tuple[np.ndarray, dict]:
        """(probabilities (B, answers), {(layer, head): question-row weights list}) for many
        programs, grouped by length so each group is one batched pass on ``backend``."""
        edits = tuple(edits)
        probs = np.zeros((len(programs), len(self.answers)))
        by_len: dict[int, list[int]] = {}
        for i, p in enumerate(programs):
            by_len.setdefault(len(p.tokens), []).append(i)
        rows: dict[tuple[int, int], list] = {
            (lay, hd): [None] * len(programs)
            for lay in range(self.n_layers)
            for hd in range(self.n_heads)
        }
        with self.running_on(backend) as placed:
            for n, idx in by_len.items():
                checked = self.check_edits(edits, n)
                ps = self._forward(placed, np.stack([programs[i].ids for i in idx]), checked)
                probs[idx] = softmax(ps.logits)
                for lh, rec in ps.heads.items():
                    for j, i in enumerate(idx):
                        rows[lh][i] = rec.weights[j]
        return probs, rows

    def _probe_heads(self) -> dict[tuple[int, int], dict]:
        probe = [p for p in task.dataset(PROBE_SEED, PROBE_SIZE) if p.kind != "undefined"]
        _, rows = self.forward_batch(probe)
        return head_stats(probe, rows)

    # ------------------------------------------------------------------------------ API
    def check(self, text: str) -> list[str]:
        """The tokens the model would see (with <bos>), or ValueError naming the problem."""
        return list(task.parse(text).tokens)

    def forward_placed(self, placed, ids, edits, start, resid, heads, query) -> Pass:
        """`_forward` for one sequence (ids (n,)), as `forward_one` asks for it."""
        if start:
            resid = [r[None] for r in resid]
            heads = {lh: rec.batched() for lh, rec in heads.items()}
        ps = self._forward(placed, ids[None], edits, start, resid, heads, query)
        return Pass(
            [read_only(r[0]) for r in ps.resid],
            {lh: rec.row(0) for lh, rec in ps.heads.items()},
            ps.logits[0],
            query=ps.query,
        )

    def head_gradients(self, run: Run, seed: np.ndarray) -> np.ndarray:
        """d (seed . the answer logits) / d every head's output in an unedited run, (layers,
        heads, n, d_head), on the run's backend (`backward.binding_head_gradients`)."""
        from .backward import binding_head_gradients  # backward reads this module's pieces

        return binding_head_gradients(self, run, seed)

    def next_tokens(self, p: np.ndarray) -> tuple[dict[str, float], str]:
        """Every answer the model can give, with its probability, and the likeliest."""
        probs = {t: float(x) for t, x in zip(self.answers, p, strict=True)}
        return probs, self.answers[int(np.argmax(p))]

    def run(self, text: str, edits=(), *, query: int | None = None, backend: str = "numpy") -> Run:
        """The program through the model with ``edits``; ``query`` picks the position whose row
        the records keep and whose output is read (default: the question, the last);
        ``backend`` is "numpy", "torch" (its default device) or "torch:cpu" / "torch:cuda"."""
        program = task.parse(text)
        edits = self.check_edits(edits, len(program.tokens))
        query = check_query(program.query_position if query is None else query, len(program.ids))
        return Run(
            self,
            program.text,
            program.ids,
            program.tokens,
            edits,
            self.forward_one(program.ids, edits, query=query, backend=backend),
            query_position=query,
            expected=program.answer if query == program.query_position else None,
            backend=backend,
        )

    def __repr__(self):
        return (
            f"BindingModel(layers={self.n_layers}, heads={self.n_heads}, d_head={self.d_head}, "
            f"retrieval_head={self.retrieval_head})"
        )


def _record(layer, hd, q, edited: EditedHead, res, out, contribution, qpos: int) -> HeadRecord:
    """One head's record, on the host: the question row's, and every row's weights and outputs."""
    weights, outputs = host(res.weights), host(out)
    return HeadRecord(
        layer=layer,
        head=hd,
        q=host(q[:, qpos]),
        k=host(edited.k),
        v=host(edited.v),
        scores=host(res.scores[:, qpos]),
        logits=host(res.logits[:, qpos]),
        weights=weights[:, qpos],
        output=outputs[:, qpos],
        legal=np.broadcast_to(edited.legal[qpos], weights.shape[:2]),
        scale_factor=float(res.scale),
        temperature=float(res.temperature),
        contribution=host(contribution[:, qpos]),
        all_weights=weights,
        ablated=edited.ablated,
        all_outputs=outputs,
    )


def span_hit(program: task.Program, weights: np.ndarray) -> bool:
    """Does the top weight at the question land on the answering definition (name, "=",
    value or ";")? Undefined questions never hit."""
    d = program.answer_definition
    return d is not None and int(np.argmax(weights)) in task.definition_span(d)


def value_hit(program: task.Program, weights: np.ndarray) -> bool:
    d = program.answer_definition
    return d is not None and int(np.argmax(weights)) == task.value_position(d)


def choose_retrieval_head(stats: dict) -> tuple[int, int]:
    """The rule above, over {(layer, head): {"value_hits": int, "mean_value_weight": float}}."""
    return max(
        stats,
        key=lambda lh: (stats[lh]["value_hits"], stats[lh]["mean_value_weight"], -lh[0], -lh[1]),
    )


def head_stats(programs, rows) -> dict:
    """Value/span hits and mean answer-value weight per head, over the defined programs."""
    defined = [i for i, p in enumerate(programs) if p.kind != "undefined"]
    out = {}
    for lh, ws in rows.items():
        vh = sum(value_hit(programs[i], ws[i]) for i in defined)
        sh = 0
        mw = 0.0
        for i in defined:
            p = programs[i]
            top = int(np.argmax(ws[i]))
            sh += top in task.definition_span(p.answer_definition)
            mw += float(ws[i][task.value_position(p.answer_definition)])
        out[lh] = {
            "value_hits": int(vh),
            "span_hits": int(sh),
            "defined": len(defined),
            "mean_value_weight": mw / max(len(defined), 1),
        }
    return out


EXAMPLES: dict[str, str] = {
    N_("Two limits (the seed's example)"): (
        "approved_limit = 5000; temporary_limit = 7000; ?approved_limit"
    ),
    N_("Two limits and a charge"): (
        "approved_limit=5000; temporary_limit=7000; charge=250; ?temporary_limit"
    ),
    N_("A rebound name"): "a=5; b=7; a=3; ?a",
    N_("A name never defined"): "rate=12; x=4; y=9; ?charge",
    N_("Distractors around the answer"): "rate=7; charge=100; total=42; limit=5; ?charge",
}


def load_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}
