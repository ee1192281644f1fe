"""The lab's pipeline: settings in, snapshot out. Pure, Panel-free, shared by every session.

`snapshot_for(settings)` is a function of a frozen, hashable `Settings` value alone, so its
result is cached once per process and shared: thirty students on one lesson step hold the same
`LabSnapshot` object, computed once (a snapshot is frozen and its arrays are read-only, so
sharing is safe). The caches are LRUs bounded both in entries and in bytes (`BoundedCache`):
a snapshot with 4096 distractors weighs a few hundred KB, one at three keys a few KB.

Pipeline for one settings value (the order matters and is tested):
scenario query rotated by `angle` -> distractors appended (generated from `seed`, always legal:
they stand for earlier context) -> optional unit-length query and keys (in the visible plane)
-> lift to `d_k` (the engine's synthetic dimension model, seeded) -> optional null candidate
(a zero key and value with a fixed logit) -> mask (per-key toggles and, when causal, keys after
the query's position) -> engine attention -> snapshot and summary.

A bad settings value raises ValueError with the message the page shows (nothing is cached).

A background backend (torch) never holds a session: `snapshot_for` always answers with the
NumPy engine's result, `background_for` names the backend whose result should replace it, and
each lab runs `background_call` on `TORCH_POOL` through its own `jobs.LatestJob`. Its results
are cached process-wide too, and a call already running for the same settings is shared. A
trained model's runs leave the session's thread the same way (`ModelState.request`, a
`LatestJob` on `model_runs.POOL`).
"""

from __future__ import annotations

import functools
import importlib.util
import math
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, fields

import numpy as np

from app.i18n.markers import N_
from app.state import settings_schema
from engine import attention, dimension, interventions
from engine.backends import backends as engine_backends
from engine.messages import Problem
from engine.scenarios import get_scenario
from engine.snapshot import (
    JACOBIAN_MAX,
    SWEEP_TEMPERATURES,
    LabSnapshot,
    TemperatureSweep,
    build_snapshot,
    entropy_curve,
)
from engine.wording import Phrase

SWEEP_D_KS = tuple(2**p for p in range(1, 13))  # 2 .. 4096
# TRANSLATORS: an error: no key takes part in the contest.
EVERY_KEY_MASKED = N_("every key is masked: unmask at least one key")
HIDDEN_BY_CAUSAL = N_(
    "every key is masked: unmask at least one key (the causal mask hides the rest)"
)
TORCH_MISSING = "torch is not installed; pip install 'attention-lab[torch]'"
MiB = 1 << 20


# ------------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class Settings:
    """Every setting of the lab as one frozen, hashable value (the pipeline's cache key).

    One field per declared setting (`settings_schema.FIELDS`), in the URL's order, typed by its
    kind (tests/app/test_settings_declared.py holds the two equal). Build one with
    `Settings.of(mapping)`; the values are not validated here (the state does that).
    """

    scenario: str
    temperature: float
    d_k: int
    scale: bool
    angle: float
    causal: bool
    query_position: int
    seed: int
    normalise: bool
    distractors: int
    distractor_norm: float
    distractor_similarity: float
    null_route: bool
    null_threshold: float
    backend: str
    keys: tuple[tuple[float, ...], ...]
    values: tuple[tuple[float, ...], ...]
    mask: tuple[bool, ...]
    labels: tuple[str, ...]

    @classmethod
    def of(cls, s: Mapping[str, object]) -> Settings:
        """Plain values (lists, ints for floats) -> one canonical value: equal settings give
        equal, equally hashed keys (1 and 1.0, lists and tuples alike)."""
        declared = settings_schema.FIELDS
        return cls(**{name: _CANONICAL[declared[name].kind](s[name]) for name in declared})

    def as_dict(self) -> dict[str, object]:
        """Plain JSON-shaped values (lists), as `LabState.settings()` gives them."""
        out: dict[str, object] = {}
        for name, field in settings_schema.FIELDS.items():
            v = getattr(self, name)
            if field.kind == "pairs":
                v = [list(p) for p in v]
            elif isinstance(v, tuple):
                v = list(v)
            out[name] = v
        return out


# One canonical Python value per kind of setting (settings_schema.Field.kind).
_CANONICAL: dict[str, Callable[[object], object]] = {
    "float": float,
    "int": int,
    "bool": bool,
    "choice": str,
    "pairs": lambda pairs: tuple(tuple(float(c) for c in p) for p in pairs),
    "bools": lambda flags: tuple(bool(b) for b in flags),
    "labels": lambda labels: tuple(str(label) for label in labels),
}


# ------------------------------------------------------------------------------ the cache


class BoundedCache:
    """A thread-safe LRU bounded by entries and by bytes; the least recently used go first.

    `get_or_compute(key, compute)` computes outside the lock; when two threads race on one key,
    the first stored value wins and both return it (so a shared value is one object). A value
    larger than the whole byte budget is returned but not stored. Exceptions are not cached.

    With `one_flight`, a key being computed is computed once: a second thread asking for it
    meanwhile waits for that computation and gets its value (or its exception), even when the
    value is too large to keep (a long text's run: seconds of forward, asked by a whole class).
    """

    def __init__(
        self,
        name: str,
        *,
        max_entries: int,
        max_bytes: int,
        size: Callable,
        one_flight: bool = False,
    ):
        self.name, self.max_entries, self.max_bytes, self._size = name, max_entries, max_bytes, size
        self._items: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._flights: dict[Hashable, Future] | None = {} if one_flight else None
        self.hits = self.misses = self.evictions = 0
        self.shared = 0  # computations another thread waited for instead of repeating

    def get(self, key: Hashable):
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        found = self.get(key)
        if found is not None:
            return found
        if self._flights is not None:
            return self._one_flight(key, compute)
        return self._store(key, compute())

    def _one_flight(self, key: Hashable, compute: Callable[[], object]):
        with self._lock:
            item = self._items.get(key)  # stored since `get` looked
            if item is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return item[0]
            running = self._flights.get(key)
            if running is None:
                mine: Future = Future()
                self._flights[key] = mine
            else:
                self.shared += 1
        if running is not None:
            return running.result()
        try:
            value = self._store(key, compute())
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        else:
            mine.set_result(value)
            return value
        finally:
            with self._lock:
                self._flights.pop(key, None)

    def _store(self, key: Hashable, value):
        nbytes = int(self._size(value))
        with self._lock:
            self.misses += 1
            item = self._items.get(key)
            if item is not None:  # another thread stored it meanwhile: share that one
                self._items.move_to_end(key)
                return item[0]
            if nbytes > self.max_bytes:
                return value
            self._items[key] = (value, nbytes)
            self._bytes += nbytes
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, gone) = self._items.popitem(last=False)
                self._bytes -= gone
                self.evictions += 1
        return value

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
            self.hits = self.misses = self.evictions = self.shared = 0

    def info(self) -> dict[str, int]:
        with self._lock:
            return dict(
                entries=len(self._items),
                bytes=self._bytes,
                hits=self.hits,
                misses=self.misses,
                evictions=self.evictions,
                shared=self.shared,
                max_entries=self.max_entries,
                max_bytes=self.max_bytes,
            )


_OVERHEAD = 4096  # Python objects around a snapshot's arrays: a rough, generous guess


def snapshot_nbytes(snap: LabSnapshot) -> int:
    """What one cached snapshot holds: its own arrays (the dimension sweep and the sweep's
    temperatures are shared by every snapshot and not counted)."""
    total = _OVERHEAD + sum(len(lab) for lab in snap.labels)
    for f in fields(snap):
        v = getattr(snap, f.name)
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total + snap.temperature_sweep.entropy.nbytes


def _arrays_nbytes(value) -> int:
    return _OVERHEAD + sum(a.nbytes for a in value if isinstance(a, np.ndarray))


# Every cache of this module; `clear_caches()` empties them (tests, and a notebook after edits).
SNAPSHOTS = BoundedCache("snapshots", max_entries=512, max_bytes=64 * MiB, size=snapshot_nbytes)
BACKGROUND = BoundedCache("background", max_entries=128, max_bytes=32 * MiB, size=snapshot_nbytes)
# The lifted (d_k-dimensional) query and keys: up to 32 MiB each
# (settings_schema.MAX_LIFT_ELEMENTS), so dragging temperature or toggling a mask never redraws
# d_k random components.
LIFTS = BoundedCache("lifts", max_entries=16, max_bytes=96 * MiB, size=_arrays_nbytes)
CURVES = BoundedCache(
    "entropy curves", max_entries=256, max_bytes=8 * MiB, size=lambda a: _OVERHEAD + a.nbytes
)
CACHES = (SNAPSHOTS, BACKGROUND, LIFTS, CURVES)


def clear_caches() -> None:
    for cache in CACHES:
        cache.clear()
    dimension_sweep_of.cache_clear()


def cache_info() -> dict[str, dict[str, int]]:
    return {cache.name: cache.info() for cache in CACHES}


# ------------------------------------------------------------------------------ the pipeline


def snapshot_for(settings: Settings) -> LabSnapshot:
    """The NumPy engine's snapshot for `settings`, computed once per process (bounded LRU).

    ValueError (with the message the page shows) when the settings have no valid route.
    """
    return SNAPSHOTS.get_or_compute(settings, functools.partial(_numpy_snapshot, settings))


def background_for(settings: Settings) -> str:
    """The backend whose result should replace `snapshot_for`'s, or '' (numpy, or unavailable:
    then the snapshot's notice says why)."""
    if settings.backend == "numpy" or not _backend_choice(settings.backend).available:
        return ""
    return settings.backend


def finished_background(settings: Settings) -> LabSnapshot | None:
    """The background backend's snapshot if some session already computed it, else None."""
    return BACKGROUND.get(settings)


_IN_FLIGHT: dict[Settings, Future] = {}
_IN_FLIGHT_LOCK = threading.Lock()


def background_snapshot_for(settings: Settings) -> LabSnapshot:
    """The background backend's snapshot (blocking; call it off the session's thread).

    Cached process-wide; when another thread is computing the same settings, this one waits
    for that result instead of making a second call. Raises what the backend raised.
    """
    found = BACKGROUND.get(settings)
    if found is not None:
        return found
    with _IN_FLIGHT_LOCK:
        running = _IN_FLIGHT.get(settings)
        if running is None:
            mine: Future = Future()
            _IN_FLIGHT[settings] = mine
    if running is not None:
        return running.result()
    try:
        snap = BACKGROUND.get_or_compute(settings, functools.partial(_torch_snapshot, settings))
    except BaseException as exc:
        mine.set_exception(exc)
        raise
    else:
        mine.set_result(snap)
        return snap
    finally:
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.pop(settings, None)


@dataclass(frozen=True, eq=False)
class Inputs:
    """The route's inputs in the visible plane (after distractors and normalisation), the
    lifted query and keys, and what the engine is called with."""

    query: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    legal: np.ndarray
    labels: list[str]
    q_hi: np.ndarray
    k_hi: np.ndarray
    v_run: np.ndarray
    kw: dict


def inputs_for(s: Settings) -> Inputs:
    """Everything before the engine's call (ValueError for settings with no valid route)."""
    n = len(s.keys)
    for name in ("values", "mask", "labels"):
        got = len(getattr(s, name))
        if got != n:
            raise ValueError(f"{name} has {got} entries but keys has {n}: they must match")
    legal = np.array(s.mask, dtype=bool)
    if s.causal:
        legal &= np.arange(n) <= min(s.query_position, n - 1)
    if not legal.any():
        raise Problem(HIDDEN_BY_CAUSAL if s.causal and any(s.mask) else EVERY_KEY_MASKED)

    scenario = get_scenario(s.scenario)
    query = interventions.rotate(np.asarray(scenario.query, dtype=float), math.radians(s.angle))
    keys = np.array(s.keys, dtype=float)
    values = np.array(s.values, dtype=float)
    labels = list(s.labels)

    count = s.distractors
    if count:
        keys, values, added = interventions.insert_distractors(
            query,
            keys,
            values,
            count=count,
            norm=s.distractor_norm,
            similarity=s.distractor_similarity,
            seed=s.seed,
        )
        labels += [str(lab) for lab in added]
        legal = np.concatenate([legal, np.ones(count, dtype=bool)])
    if s.normalise:
        # After the distractors, so every candidate is unit length (directions, and so the
        # distractors' similarity to the query, are unchanged).
        query = _unit("the query", query)
        keys = _unit("a key", keys)

    total = len(keys) + (1 if s.null_route else 0)
    if s.d_k * total > settings_schema.MAX_LIFT_ELEMENTS:
        raise ValueError(
            f"d_k={s.d_k} with {total} keys needs {s.d_k * total} numbers; the limit is "
            f"{settings_schema.MAX_LIFT_ELEMENTS}: lower d_k or the number of distractors"
        )
    q_hi, k_hi = lift(query, keys, s.d_k, s.seed)

    v_run = values
    mask_arg: np.ndarray = legal
    if s.null_route:
        # One float mask carries both the legality (-inf) and the null candidate's logit.
        k_hi, v_run, mask_arg = interventions.null_route(
            k_hi, values, s.null_threshold, legal=legal
        )
    kw = dict(mask=mask_arg, scale=s.scale, temperature=s.temperature, fully_masked="error")
    return Inputs(query, keys, values, legal, labels, q_hi, k_hi, v_run, kw)


def lift(query: np.ndarray, keys: np.ndarray, d_k: int, seed: int):
    """`dimension.lift`, cached process-wide (read-only arrays)."""
    tag = (query.tobytes(), keys.tobytes(), keys.shape, d_k, seed)

    def compute():
        q_hi, k_hi = dimension.lift(query, keys, d_k, seed=seed)
        q_hi.setflags(write=False)
        k_hi.setflags(write=False)
        return q_hi, k_hi

    return LIFTS.get_or_compute(tag, compute)


def _numpy_snapshot(s: Settings) -> LabSnapshot:
    inp = inputs_for(s)
    notice = ""
    if s.backend != "numpy":
        choice = _backend_choice(s.backend)
        if not choice.available:
            # TRANSLATORS: a notice; {backend} is a backend's name (torch-cuda), {reason} why
            # (in English, from the backend), numpy the engine shown instead.
            notice = Phrase(
                N_("{backend} is not available here ({reason}); showing numpy"),
                {"backend": s.backend, "reason": choice.reason},
            )
    res = attention(inp.q_hi, inp.k_hi, inp.v_run, backend="numpy", **inp.kw)
    return _snapshot(s, inp, res, backend_used="numpy", notice=notice)


def _torch_snapshot(s: Settings) -> LabSnapshot:
    inp = inputs_for(s)
    device = s.backend.split("-", 1)[1]
    # Writable copies: torch refuses to wrap the cache's read-only arrays without a warning.
    q, k, v = (np.array(a) for a in (inp.q_hi, inp.k_hi, inp.v_run))
    res = _torch_attention(q, k, v, device, dict(inp.kw))
    return _snapshot(s, inp, res, backend_used=s.backend, notice="")


def _snapshot(s: Settings, inp: Inputs, res, *, backend_used: str, notice: str) -> LabSnapshot:
    n = len(inp.keys)
    weights_all = np.asarray(res.weights, dtype=float)  # the null candidate last, when on
    logits_all = np.asarray(res.logits, dtype=float)
    contributions = np.asarray(res.contributions, dtype=float)[:n]
    entropy = float(res.entropy)
    # The engine's own Jacobian while it is small; past that only the drawn block is formed.
    small = len(weights_all) <= JACOBIAN_MAX
    return build_snapshot(
        labels=tuple(inp.labels),
        n_pairs=len(s.keys),
        query=inp.query,
        keys=inp.keys,
        values=inp.values,
        legal=inp.legal,
        scores=np.asarray(res.scores, dtype=float)[:n],
        logits=logits_all[:n],
        weights=weights_all[:n],
        contributions=contributions,
        contribution_norms=np.linalg.norm(contributions, axis=-1),
        output=np.asarray(res.output, dtype=float),
        entropy=entropy,
        effective_keys=float(res.effective_keys),
        jacobian=np.asarray(res.jacobian, dtype=float)[:n, :n] if small else None,
        jacobian_weights=weights_all,
        null_weight=float(weights_all[n]) if s.null_route else None,
        null_logit=float(logits_all[n]) if s.null_route else None,
        temperature_sweep=_temperature_sweep(logits_all * s.temperature, s.temperature, entropy),
        dimension_sweep=dimension_sweep_of(s.seed, max(2, len(s.keys)), s.temperature),
        backend_used=backend_used,
        notice=notice,
        d_k=s.d_k,
        temperature=s.temperature,
        scale_factor=1.0 / math.sqrt(s.d_k) if s.scale else 1.0,
    )


def _temperature_sweep(base_logits, temperature, entropy) -> TemperatureSweep:
    # The curve depends on the logits at T = 1 only: a new temperature reuses it.
    curve = CURVES.get_or_compute(base_logits.tobytes(), lambda: entropy_curve(base_logits))
    return TemperatureSweep(SWEEP_TEMPERATURES, curve, temperature, entropy)


@functools.lru_cache(maxsize=64)
def dimension_sweep_of(seed: int, n_keys: int, temperature: float):
    # Shared by sessions (its arrays are read-only). It depends on the seed, the number of
    # pairs and the temperature only: moving d_k, a key or a mask never recomputes it, and the
    # engine caches the random logits, so a new temperature only redoes the entropies.
    return dimension.sweep(SWEEP_D_KS, n_keys=n_keys, seed=seed, temperature=temperature)


def _unit(what: str, x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1)
    if np.any(norms == 0):
        which = "" if x.ndim == 1 else f" (key {int(np.argmin(norms)) + 1})"
        raise ValueError(f"normalise: {what}{which} has zero length and has no direction")
    return interventions.normalise(x)


def _torch_attention(q, k, v, device, kw):
    # Every field the snapshot reads is materialised here, on the worker thread.
    res = attention(q, k, v, backend="torch", device=device, **kw).to_numpy()
    for name in ("output", "weights", "logits", "scores", "contributions", "entropy"):
        getattr(res, name)
    res.effective_keys  # noqa: B018 - computed now, on the worker
    return res


# ------------------------------------------------------------------------ torch, off the thread

# Torch calls run here so a slow or hung backend cannot block the session's thread (with
# callbacks on the event loop, every session's). Each lab sends its calls here through its own
# `jobs.LatestJob`, one at a time, the newest winning.
TORCH_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lab-torch")


def background_call(settings: Settings) -> tuple[LabSnapshot | None, str]:
    """A lab's background backend: its snapshot, or None and why (numpy's result stays)."""
    try:
        return background_snapshot_for(settings), ""
    except Exception as exc:  # noqa: BLE001 - any torch failure keeps numpy's result
        return None, f"{settings.backend} failed ({type(exc).__name__}: {exc}); showing numpy"


# ------------------------------------------------------------------------------ backends


@dataclass(frozen=True)
class BackendChoice:
    name: str  # "numpy", "torch-cpu", "torch-cuda"
    available: bool
    reason: str  # why not, when unavailable; empty otherwise
    checked: bool = True  # False: installed, but the device is only checked when picked


@functools.lru_cache(maxsize=1)
def _backend_table() -> tuple:
    return tuple(engine_backends())


def _backend_choice(name: str) -> BackendChoice:
    if name == "numpy":
        return BackendChoice("numpy", True, "")
    device = name.split("-", 1)[1]
    for info in _backend_table():
        if info.name == "torch" and info.device == device:
            return BackendChoice(name, bool(info.available), "" if info.available else info.reason)
    return BackendChoice(name, False, f"the engine reports no torch backend for {device}")


def available_backends() -> list[BackendChoice]:
    """Every backend the picker offers, with whether it works here and why not."""
    return [_backend_choice(name) for name in settings_schema.BACKENDS]


def listed_backends() -> list[BackendChoice]:
    """The picker's list without importing torch (about 180 MB of server memory).

    Until some session picks a torch backend (or the audit checks torch), an installed torch is
    listed as "checked when picked": a device that turns out to be missing then gives the
    numpy fallback with its notice, as any unavailable backend does. Once torch is imported,
    the full answer costs nothing and is given.
    """
    if "torch" in sys.modules:
        return available_backends()
    try:
        installed = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        installed = False
    choices = [BackendChoice("numpy", True, "")]
    for name in settings_schema.BACKENDS:
        if name == "numpy":
            continue
        if not installed:
            choices.append(BackendChoice(name, False, TORCH_MISSING))
        else:
            choices.append(BackendChoice(name, True, "", checked=name == "torch-cpu"))
    return choices
