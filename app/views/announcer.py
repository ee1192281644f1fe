"""The page's news for a screen reader: what changed, said once the change has settled.

Every snapshot drawn goes through `route`, and every one-off message (Measure's verdict, a vote
counted) through `say`. Nothing is said at once: each call restarts a short wait (`SETTLE_MS`),
and when it runs out with nothing newer the news is said in one sentence through the page's one
polite live region (`LiveSummary.say`): how the route went from the one said last to the one
now (app/state/route_news.py), then the messages. A drag or a slider sweep is thus one
sentence, from where it started to where it stopped, not one per step.

Without a served document (a notebook, an in-process test) the news is said at once. The news
is said in the page's language (`tr`): the route's sentences and a message that is a `Phrase`
are translated when said, not when made.
"""

from __future__ import annotations

from app.i18n.translator import ENGLISH, Translator
from app.state.route_news import route_change
from app.views.phrases import phrase_text

SETTLE_MS = 1000


class Announcer:
    """The news of one page, said through `region` (a LiveSummary) on `doc`'s loop."""

    def __init__(self, region, doc=None, settle_ms: int = SETTLE_MS, tr: Translator = ENGLISH):
        self.region = region
        self.tr = tr
        self.doc = doc if doc is not None and doc.session_context is not None else None
        self.settle_ms = settle_ms
        self._said = None  # the route said last (the first drawing is the start: not news)
        self._now = None
        self._messages: list[str] = []
        self._wait = 0  # counts the waits started: only the newest one speaks

    def route(self, snap) -> None:
        """A snapshot was drawn."""
        if self._now is None:
            self._said = snap
        self._now = snap
        if snap is not self._said:
            self._later()

    def say(self, message: str) -> None:
        """A one-off message, said with the route's news once things settle."""
        if message:
            self._messages.append(message)
            self._later()

    def _later(self) -> None:
        self._wait += 1
        if self.doc is None:
            self.flush()
            return
        wait = self._wait
        self.doc.add_timeout_callback(lambda: self._settled(wait), self.settle_ms)

    def _settled(self, wait: int) -> None:
        if wait == self._wait:  # nothing newer came in meanwhile
            self.flush()

    def flush(self) -> None:
        """Say the news now (the route's change since it was last said, then the messages)."""
        parts = [route_change(self._said, self._now)] if self._now is not self._said else []
        parts += self._messages
        self._said, self._messages = self._now, []
        sentence = " ".join(phrase_text(p, self.tr) for p in parts if p)
        if sentence:
            self.region.say(sentence)
