"""Every head's causal role for the open sentence: the causal map and the patching map.

No Panel or Bokeh import. It follows one `ModelState`: the maps are measured on its model and
sentence (with no intervention, so every head is judged on the same clean run) on a worker
thread, with a progress fraction and a Stop, and kept per sentence by the engine's cache. Two
`jobs.LatestJob`s, the suggested change and the map, hand results to the session's thread
through the session's `handover` (shared with the `ModelState`); `settle()` waits for them in
a notebook or a test, `close()` drops them when the page closes.

The maps' worker is shared by the process and served in turn (`MapTurns`): each session has its
own lane, the lanes are taken in rotation, and a map gives the worker up between two layers
whenever another session waits. A session has one map at work at most: a new map (a Measure or
a Patch while one runs, a crafted click) stops its older one, and a newer sentence stops both
and drops their results; work queued for an older sentence does nothing when its turn comes.
So one student's maps never sit ahead of another's, and a map of a long text (minutes) shares
the worker instead of holding it.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np
import param

from app.i18n.translator import ENGLISH, Translator
from app.state import attribution_runs, jobs, model_runs
from app.state.map_cost import MapCost, time_left
from app.state.model_state import ENGINE_BACKENDS
from engine.heads import shown_token
from engine.trained import causal
from engine.wording import N_, Phrase, worded

log = logging.getLogger(__name__)


class MapTurns:
    """A worker shared by every session, whose sessions take turns.

    Each owner (a session's `CausalState`) has a lane of tasks, first in first out, and runs
    one at a time. The lanes take turns: a lane whose task ends (or pauses) goes to the back of
    the rotation, behind every lane that waited meanwhile, so one session's queued work never
    sits ahead of another session's only task. A task may call `pause(owner)` between two steps:
    if another session waits, that one runs first and this task goes on at its owner's next
    turn. `slots` tasks run at once; each runs on a thread of its own (a paused one keeps its
    thread, not its slot).
    """

    def __init__(self, slots: int = 1, name: str = "lab-maps"):
        self._turns = threading.Condition()
        self._free = slots
        self._lanes: dict[int, deque] = {}  # id(owner) -> its waiting tasks
        self._rotation: deque[int] = deque()  # owners with a task waiting and none running
        self._running: set[int] = set()
        self._name = name

    def submit(self, owner, task: Callable, *args) -> None:
        """Queue `task(*args)` in `owner`'s lane."""
        key = id(owner)
        with self._turns:
            self._lanes.setdefault(key, deque()).append(functools.partial(task, *args))
            if key not in self._running and key not in self._rotation:
                self._rotation.append(key)
            self._grant()

    def pause(self, owner) -> None:
        """From a task of `owner` that holds a slot: let another session's task run first if
        one waits; return once it is this owner's turn again (at once if nobody waits)."""
        key = id(owner)
        with self._turns:
            if not self._rotation:
                return
            resume = threading.Event()
            self._lanes.setdefault(key, deque()).appendleft(resume)  # before its queued tasks
            self._step_back(key)
        resume.wait()

    def waiting(self) -> int:
        """Tasks queued or paused, every session's."""
        with self._turns:
            return sum(len(lane) for lane in self._lanes.values())

    def _step_back(self, key: int) -> None:  # with the lock held: `key`'s task ended or paused
        self._running.discard(key)
        self._free += 1
        if self._lanes.get(key):
            self._rotation.append(key)  # behind every lane that waited meanwhile
        self._grant()

    def _grant(self) -> None:  # with the lock held
        while self._free and self._rotation:
            key = self._rotation.popleft()
            lane = self._lanes[key]
            task = lane.popleft()
            if not lane:
                del self._lanes[key]
            self._running.add(key)
            self._free -= 1
            if isinstance(task, threading.Event):
                task.set()  # a paused task goes on
            else:
                thread = threading.Thread(
                    target=self._run, args=(key, task), name=self._name, daemon=True
                )
                thread.start()

    def _run(self, key: int, task) -> None:
        try:
            task()
        except Exception:  # noqa: BLE001 - a task's failure must not stop the turns
            log.exception("a map task failed")
        finally:
            with self._turns:
                self._step_back(key)


# One slot: a map keeps one core busy for seconds (minutes on a long text), and the other core
# serves the pages (and, off the event loop, their forwards: model_runs.POOL).
TURNS = MapTurns(slots=1)
CAUSAL, PATCHING = "causal", "patching"
# `change` while a suggestion is sought (a Phrase: the view says it in the page's language).
LOOKING = Phrase(N_("looking for a same-length change..."))
MAP_BACKEND = "numpy"  # the maps run on NumPy, as the engine's do by default


class CausalState(jobs.HandsOver, param.Parameterized):
    """One session's maps. Call `measure` or `patch`; read `causal`, `patching`, `progress`."""

    token = param.Integer(
        default=None,
        allow_None=True,
        doc="the key position of the weights, as the student picked it (None: `open_token`)",
    )
    corrupted = param.String(default="", doc="the changed sentence for activation patching")
    change = param.String(default="", constant=True, doc="what the suggested change is")
    positions = param.List(
        default=[], item_type=int, doc="the token positions a patch is limited to (none: all)"
    )

    causal = param.Parameter(default=None, constant=True, doc="engine CausalMap, or None")
    patching = param.Parameter(default=None, constant=True, doc="engine PatchingMap, or None")
    running = param.String(default="", constant=True, doc='"causal" or "patching" while at work')
    progress = param.Number(default=0.0, bounds=(0.0, 1.0), constant=True)
    message = param.String(default="", constant=True)
    error = param.String(default="", constant=True)

    def __init__(self, mstate, **params):
        super().__init__(**params)
        self._m = mstate
        # Results reach the session's thread as its model's runs do (the session's hand-over).
        self.handover = mstate.handover
        on_turns = functools.partial(TURNS.submit, self)  # this session's lane of the worker
        # A new sentence makes its suggestion stale; a new map, or sentence, the map.
        self._suggestion = jobs.LatestJob(on_turns, self.hand_over, failed=self._not_suggested)
        self._map = jobs.LatestJob(on_turns, self.hand_over, failed=self._failed)
        self._stop = threading.Event()  # the Stop button: the map at work ends, and says so
        self._started = 0.0
        self.suggested = ""  # the changed sentence the lab suggested (`change` describes it)
        mstate.param.watch(lambda *_e: self.forget(), ["model", "text", "query"])
        self.forget()

    # ---------------------------------------------------------------- the sentence changed

    def forget(self) -> None:
        """A new sentence or model: drop both maps, stop one at work, and look for a changed
        sentence to suggest on the worker (a language model may try several forwards)."""
        self._map.drop()
        self.corrupted = self.suggested = ""
        self.positions = []  # positions of the old sentence mean nothing in the new one
        with param.edit_constant(self):
            self.param.update(
                causal=None, patching=None, running="", progress=0.0, message="", error=""
            )
            self.change = LOOKING
        self.token = None
        self._suggestion.submit(self._suggest, self._m.model, self._m.text)

    def _suggest(self, ticket: jobs.Ticket, model, text) -> None:
        try:
            # Shared with every session on this sentence (and the patch step's lesson).
            corrupted, change = attribution_runs.counterfactual(model, text)
        except Exception as exc:  # noqa: BLE001 - no suggestion: the student types one
            corrupted, change = "", _not_suggested_words(worded(exc))
        ticket.deliver(self._suggested, corrupted, change)

    def _not_suggested(self, failure: str) -> None:
        self._suggested("", _not_suggested_words(failure))

    def _suggested(self, corrupted, change) -> None:
        self.suggested = corrupted
        self.corrupted = corrupted
        with param.edit_constant(self):
            self.change = change

    def change_words(self, corrupted: str) -> str:
        """What the changed sentence `corrupted` changes, in words: the suggestion's own
        description when it is the suggested one, else what differs, token by token (a typed
        sentence once kept the suggestion's caption, "Mary became Peter ...")."""
        if not corrupted.strip():
            return self.change
        if corrupted == self.suggested and self.change:
            return self.change
        return Phrase(N_("Your sentence: {change}"), {"change": self.what_changed(corrupted)})

    def what_changed(self, corrupted: str) -> str:
        """The suggestion's description, or what differs token by token."""
        if corrupted == self.suggested and self.change:
            return self.change
        return describe_change(self._m.loaded, self._m.text, corrupted)

    def positions_words(self, positions, tr: Translator = ENGLISH) -> str:
        """Where a patch puts the open sentence's head output: at every position, or at the
        chosen tokens of the open sentence."""
        _ = tr.gettext
        if not positions:
            return _("at every position")
        tokens = self._m.loaded.check(self._m.text)
        named = [f"{shown_token(tokens[p])} @{p}" for p in positions if 0 <= p < len(tokens)]
        return _("only at {tokens}").format(tokens=", ".join(named))

    # ---------------------------------------------------------------- measuring

    def open_token(self) -> int | None:
        """The key the open head weighs most from the query position: the map reads every
        head's weight there until the student picks another token (None: no run yet)."""
        run, layer, head = self._m.run, self._m.layer, self._m.head
        if run is None or not (layer < run.model.n_layers and head < run.model.n_heads):
            return None  # another model's head, while a switch of model is under way
        return int(np.argmax(run.head(layer, head).weights))

    def cost(self) -> MapCost:
        """What a map of every head costs on the open sentence: the forwards it runs, and how
        long one forward of this sentence took here (None until one has run)."""
        m = self._m
        took = model_runs.forward_seconds(m.model, m.text, MAP_BACKEND)
        if took is None:
            took = model_runs.forward_seconds(m.model, m.text, ENGINE_BACKENDS[m.backend])
        return MapCost(causal.map_forwards(m.loaded), took, self._cached_seconds())

    def _cached_seconds(self) -> float | None:
        """How long the map `measure` would start takes from the engine's cache (None: its
        ablations are not cached, or the plain run it reads is not at hand: no forward here)."""
        run = self._m.run
        if run is None:
            return None
        query = run.query_position
        runs = model_runs.cached_runs(self._m.model, self._m.text, query, MAP_BACKEND, ())
        return None if runs is None else causal.cached_map_seconds(runs[0])

    def time_left(self) -> float | None:
        """Seconds the map at work has left, at its own pace (None: none at work, or no price
        and too little done to tell)."""
        if not self.running:
            return None
        return time_left(time.monotonic() - self._started, self.progress, self.cost().seconds)

    def measure(self) -> None:
        """Start the causal map of the open sentence (every head ablated in turn), each head's
        weight read on the picked token, else on the one the open head weighs most."""
        name, text = self._m.model, self._m.text
        token = self.token if self.token is not None else self.open_token()
        run = self._m.run
        query = run.query_position if run is not None else None  # the row the planes show

        def job(progress, cancel):
            if cancel():
                raise causal.Cancelled("replaced before it started")
            # The plain run the estimate is of, shared by the process: no forward of its own.
            plain = model_runs.plain_run(name, text, query, MAP_BACKEND)
            return causal.causal_map(plain, token, progress=progress, cancel=cancel)

        self._start(CAUSAL, job)

    def patch(self) -> None:
        """Start the patching map: each head's output from the open sentence put into the
        changed one (`corrupted`), at the chosen `positions` (none chosen: at every one)."""
        model, clean, corrupted = self._m.loaded, self._m.text, self.corrupted
        positions = tuple(self.positions) or None  # the engine checks them (ValueError)

        def job(progress, cancel):
            if cancel():
                raise causal.Cancelled("replaced before it started")
            return model.patching_map(
                clean, corrupted, positions=positions, progress=progress, cancel=cancel
            )

        self._start(PATCHING, job)

    def stop(self) -> None:
        """The Stop button: the map at work ends at its next layer and says "stopped"."""
        self._stop.set()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no map or suggestion is at work; True if idle."""
        return jobs.settle_all((self._suggestion, self._map), timeout)

    def close(self) -> None:
        """The page closed: drop the map and the suggestion under way; nothing more arrives."""
        self._suggestion.stop()
        self._map.stop()

    def _start(self, kind: str, job) -> None:
        # One map at work per session: a new one makes the older stale (it stops at its next
        # layer, and its results are dropped).
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._set(running=kind, progress=0.0, message="starting", error="")
        self._map.submit(self._work, kind, job, self._stop)

    def _work(self, ticket: jobs.Ticket, kind, job, stop: threading.Event) -> None:
        def progress(fraction, message):
            ticket.deliver(self._progress, fraction, message)
            TURNS.pause(self)  # between two layers: another session's map may go first

        try:
            result, failure = job(progress, lambda: stop.is_set() or ticket.stale()), ""
        except causal.Cancelled:
            result, failure = None, "stopped"
        except ValueError as exc:  # a sentence the map refuses (lengths differ, same answers)
            result, failure = None, worded(exc)
        except Exception as exc:  # noqa: BLE001 - the page stays up and says what failed
            result, failure = None, f"{type(exc).__name__}: {exc}"
        ticket.deliver(self._finish, kind, result, failure)

    def _progress(self, fraction, message) -> None:
        if self.running:
            self._set(progress=min(1.0, max(0.0, fraction)), message=message)

    def _failed(self, failure: str) -> None:
        self._set(running="", progress=0.0, message="", error=failure)

    def _finish(self, kind, result, failure) -> None:
        done = {"running": "", "progress": 1.0 if result is not None else 0.0, "message": ""}
        if result is None:
            self._set(**done, error="" if failure == "stopped" else failure)
            if failure == "stopped":
                self._set(message="stopped")
            return
        self._set(**done, **{kind: result}, error="")

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)


def _not_suggested_words(reason: str) -> Phrase:
    # TRANSLATORS: the Causal map's caption when no changed sentence could be found.
    return Phrase(N_("no change suggested ({reason})"), {"reason": reason})


def describe_change(model, clean: str, corrupted: str) -> Phrase:
    """What differs between the open sentence and a changed one, token by token, or why no
    patch can go between them (a `Phrase`: English as `str`, said in the page's language)."""
    try:
        before, after = model.check(clean), model.check(corrupted)
    except ValueError as exc:
        return Phrase(N_("the model cannot read it ({reason})"), {"reason": worded(exc)})
    if len(before) != len(after):
        template = N_(
            "it is {after} tokens and the open sentence {before}: patching needs the same number"
        )
        return Phrase(template, {"after": len(after), "before": len(before)})
    changed = [(i, a, b) for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    if not changed:
        return Phrase(N_("it is the open sentence itself: change a word"))
    said = None
    for i, a, b in changed[:4]:
        # TRANSLATORS: one changed token of a typed sentence; {old} and {new} are tokens.
        one = Phrase(
            N_("{old} became {new} at token {position}"),
            {"old": shown_token(a), "new": shown_token(b), "position": i},
        )
        # Each change after the first joins the list as the language joins clauses.
        said = (
            one
            if said is None
            else Phrase(N_("{earlier}; {later}"), {"earlier": said, "later": one})
        )
    if len(changed) > 4:
        template = N_("{changes}, and {count} more tokens")
        said = Phrase(template, {"changes": said, "count": len(changed) - 4})
    return said
