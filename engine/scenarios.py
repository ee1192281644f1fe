"""Ready-made lab configurations, stored as data.

Each scenario is a 2-D picture (one query, a few key/value pairs) plus the settings that make
its lesson visible. Keys are listed in sequence order, so `query_position` and `causal` say
which of them a left-to-right model could see. Arrays are read-only: copy before editing.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from .wording import N_


@dataclass(frozen=True, eq=False)
class Scenario:
    name: str  # URL slug
    title: str
    demonstrates: str
    query: np.ndarray  # (2,)
    keys: np.ndarray  # (n, 2)
    values: np.ndarray  # (n, 2)
    labels: tuple[str, ...]  # one short label per key
    legal: tuple[bool, ...] | None = None  # per-key mask, None = every key legal
    causal: bool = False
    query_position: int | None = None  # sequence position of the query; causal hides later keys
    temperature: float = 1.0
    d_k: int = 2
    scale: bool = True
    distractors: int = 0
    distractor_norm: float = 1.0
    distractor_similarity: float = 0.0
    null_threshold: float | None = None

    def __post_init__(self):
        q = np.array(self.query, dtype=float)
        k = np.array(self.keys, dtype=float)
        v = np.array(self.values, dtype=float)
        if q.shape != (2,) or k.ndim != 2 or k.shape[1] != 2 or v.shape != k.shape:
            raise ValueError(
                f"scenario {self.name!r}: need query (2,), keys (n, 2), values (n, 2); "
                f"got {q.shape}, {k.shape}, {v.shape}"
            )
        n = k.shape[0]
        if n < 1:
            raise ValueError(f"scenario {self.name!r} needs at least one key")
        for label, arr in (("query", q), ("keys", k), ("values", v)):
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"scenario {self.name!r}: {label} must be finite")
            arr.setflags(write=False)
            object.__setattr__(self, label, arr)
        labels = tuple(str(s) for s in self.labels)
        if len(labels) != n:
            raise ValueError(f"scenario {self.name!r}: {len(labels)} labels for {n} keys")
        object.__setattr__(self, "labels", labels)
        if self.legal is not None:
            if len(self.legal) != n:
                raise ValueError(f"scenario {self.name!r}: legal has {len(self.legal)} entries")
            object.__setattr__(self, "legal", tuple(bool(x) for x in self.legal))
        if self.query_position is not None and not 0 <= self.query_position < n:
            raise ValueError(f"scenario {self.name!r}: query_position outside 0..{n - 1}")
        if self.causal and self.query_position is None:
            raise ValueError(f"scenario {self.name!r}: causal needs a query_position")
        if not (np.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"scenario {self.name!r}: temperature must be finite and > 0")
        if self.d_k < 2:
            raise ValueError(f"scenario {self.name!r}: d_k must be >= 2")
        if not self.legal_mask().any():
            raise ValueError(f"scenario {self.name!r}: the query must keep at least one legal key")

    @property
    def n_keys(self) -> int:
        return int(self.keys.shape[0])

    def legal_mask(self, *, causal: bool | None = None) -> np.ndarray:
        """Bool mask (n,), True = the query may use the key.

        Combines `legal` with the causal rule (keys after `query_position` are hidden).
        `causal` overrides the scenario's own setting, for a causal toggle in the UI.
        """
        mask = np.ones(self.n_keys, dtype=bool) if self.legal is None else np.array(self.legal)
        use_causal = self.causal if causal is None else causal
        if use_causal and self.query_position is not None:
            mask[self.query_position + 1 :] = False
        return mask


_ALL = (
    Scenario(
        name="basic",
        title=N_("One query, three keys"),
        demonstrates=(
            "The smallest complete router: the query scores three keys, softmax turns the "
            "scores into weights, and the output is the weighted sum of the values. Rotate the "
            "query to move the route; swap values to change the output without moving it."
        ),
        query=[1.0, 0.0],
        keys=[[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]],
        values=[[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]],
        labels=("A", "B", "C"),
    ),
    Scenario(
        name="contest",
        title=N_("A contest of logits 2, 1, 0"),
        demonstrates=(
            "Softmax is a local contest: unscaled logits 2, 1 and 0 share the route roughly "
            "0.665 / 0.245 / 0.090. Shifting every logit by the same amount changes nothing; "
            "lowering the temperature makes the same ranking more decisive."
        ),
        query=[1.0, 0.0],
        keys=[[2.0, 0.0], [1.0, 1.0], [0.0, 2.0]],
        values=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]],
        labels=("logit 2", "logit 1", "logit 0"),
        scale=False,
    ),
    Scenario(
        name="bank",
        title=N_("The bank approved the loan"),
        demonstrates=(
            "The query at 'approved' looks for its subject. 'bank' wins on its key, while its "
            "value carries what the reader needs (entity, number), not a definition. The two "
            "'the' tokens have identical keys, so no query can tell them apart. Switch causal "
            "on to drop the words after 'approved'."
        ),
        query=[1.5, 0.5],
        keys=[[-0.3, 0.4], [1.2, 0.6], [0.2, -0.8], [-0.3, 0.4], [0.9, -0.1]],
        values=[[0.0, 0.2], [2.0, 1.0], [0.5, -1.0], [0.0, 0.2], [1.0, -1.0]],
        labels=("the (1)", "bank", "approved", "the (2)", "loan"),
        query_position=2,
    ),
    Scenario(
        name="limit",
        title=N_("Which limit does 'charge < limit' mean?"),
        demonstrates=(
            "Code: approved_limit = 5000; temporary_limit = 7000; charge < limit. The query at "
            "'limit' picks a definition. Values hold (amount in thousands, scope); the "
            "temporary_limit value leaves the amount out, so routing to it retrieves nothing "
            "useful. Move one key onto the other to see the router lose the distinction. A "
            "later redefinition competes until causal is switched on."
        ),
        query=[1.0, 1.0],
        keys=[[1.2, 0.6], [1.0, 1.1], [-0.4, 0.5], [0.3, 0.2], [1.4, 1.3]],
        values=[[5.0, 1.0], [0.0, -1.0], [0.0, 0.0], [0.0, 0.5], [9.0, 0.0]],
        labels=("approved_limit", "temporary_limit", "charge", "limit", "limit (later)"),
        query_position=3,
    ),
    Scenario(
        name="sharp",
        title=N_("Why is this route sharp?"),
        demonstrates=(
            "One key takes almost the whole route. Four causes predict different responses: "
            "normalising q and k (the long key loses), raising the temperature (the same "
            "ranking, softer), dropping hidden dimensions (only with scaling off), rotating the "
            "query (does the same key keep winning?). Run the diagnosis to measure each."
        ),
        query=[1.0, 0.0],
        keys=[[1.0, 0.0], [3.0, 2.6], [0.0, 1.0], [-1.0, 0.0]],
        values=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]],
        labels=("aligned", "long key", "side", "opposite"),
        temperature=0.5,
        scale=False,
    ),
    Scenario(
        name="long_context",
        title=N_("Long context: more candidates, same fact"),
        demonstrates=(
            "A useful fact, its exact copy, an older fact it supersedes, a long irrelevant key "
            "and 64 inserted distractors. The fact's raw score never changes, yet its weight "
            "falls as candidates are added: the copy splits the route, the old fact competes "
            "on a similar key, and the long key takes mass by norm alone."
        ),
        query=[1.5, 0.0],
        keys=[[1.2, 0.3], [1.2, 0.3], [1.1, 0.5], [1.0, -3.5]],
        values=[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]],
        labels=("fact", "fact (copy)", "old fact", "long key"),
        distractors=64,
        distractor_norm=1.0,
        distractor_similarity=0.6,
    ),
    Scenario(
        name="null_route",
        title=N_("Refusing when nothing fits"),
        demonstrates=(
            "No key points where the query looks, yet softmax still hands out the full route. "
            "A null candidate with a threshold logit and a zero value absorbs the mass that no "
            "key deserves; its weight is how much of the route was refused."
        ),
        query=[1.0, 0.0],
        keys=[[0.1, 1.0], [-0.2, 0.9], [0.0, -1.0]],
        values=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]],
        labels=("north", "north-west", "south"),
        null_threshold=2.0,
    ),
)

# A scenario's title is the scenario picker's option, translated where it is shown.
SCENARIOS: MappingProxyType = MappingProxyType({s.name: s for s in _ALL})
DEFAULT_SCENARIO = "basic"


def get_scenario(name: str) -> Scenario:
    """The scenario with this slug; an unknown name is a ValueError listing the valid ones."""
    try:
        return SCENARIOS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown scenario {name!r}; choose one of: {', '.join(SCENARIOS)}"
        ) from None
