"""Drive a whole class against a running lab: a teacher and N students as real sessions.

    python -m tools.classload --target http://127.0.0.1:8080/app --students 200
    python -m tools.loadtest --class-size 30          # the same, from the load tool

The teacher starts a class the way the header's button does (POST /class/new, which sets the
teacher's cookie), then opens the page as a `bokeh.client` session carrying that cookie, as
a browser's page would. Each student is another session on /app?class=CODE. The teacher loads
step 1 and presses Next --steps times; every student's page must show each step. Then every
student votes once on the step shown. Measured, side by side in one run:

- Next to step shown: from the teacher's button press until each student's page has the
  step (its lesson heading changed), one figure per student per press;
- vote to chart: from a student's choice until the teacher's chart (source class_votes)
  counts that many votes;
- votes counted: what the teacher's chart counts at the end, of the votes sent.

Bounded: loopback only, a hard budget (--max-seconds). Used by tools/bench_class.py (three
replicas, Redis, HAProxy) and by tests/server/test_server_loadtest.py (a handful of students).
"""

from __future__ import annotations

import argparse
import html
import re
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from urllib.parse import urlparse

import numpy as np

from tools.bokeh_internals import (
    loop_until_closed,
    pull_document,
    send_cookies_from_this_thread,
    send_without_delay,
)
from tools.harness import require_loopback

# "Step 3 of 12" in any language the class speaks ("Paso 3 de 12", "第 3 步，共 12 步"): the
# step is the heading's first number.
STEP_HEADING = re.compile(r"(\d+)\D+\d+")
JOINED = re.compile(r"data-class-joined=.(\d+)")
ARRIVED = re.compile(r"data-class-arrived=.(\d+)")


def register_models() -> None:
    """The client must know every Bokeh model the page uses, as a browser knows their JS."""
    import importlib
    import pkgutil

    import panel.models

    import app.page.lab_page  # noqa: F401 - registers the lab's own ReactiveHTML models
    from app.patches import bokeh_speedups

    # Each student here is a Python client that decodes every document event, where a class
    # has browsers. Bokeh's shortcut property functions (identical results) keep the tool's
    # own CPU, which shares the machine with the server, at about a third: without them a class
    # of 10 cost the client 27 s of CPU to open instead of 10 s, and the server's figures
    # suffered for it.
    bokeh_speedups.apply()

    for module in pkgutil.iter_modules(panel.models.__path__, "panel.models."):
        try:
            importlib.import_module(module.name)
        except ImportError:
            pass


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def start_class(app_url: str) -> tuple[str, str]:
    """POST /class/new as the header's button does: (the code, the teacher's key)."""
    parts = urlparse(app_url)
    base = f"{parts.scheme}://{parts.netloc}{parts.path.rsplit('/', 1)[0]}"
    request = urllib.request.Request(f"{base}/class/new", data=b"", method="POST")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(request, timeout=30)
        raise RuntimeError("/class/new did not redirect")
    except urllib.error.HTTPError as reply:
        if reply.code != 303:
            raise RuntimeError(
                f"/class/new answered {reply.code}: {reply.read()[:200]!r}"
            ) from None
        cookie = SimpleCookie()
        for header in reply.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
        keys = {
            k[len("alab_teach_") :]: m.value
            for k, m in cookie.items()
            if k.startswith("alab_teach_")
        }
        if len(keys) != 1:
            raise RuntimeError(f"/class/new set no teacher cookie: {list(cookie)}") from None
        return next(iter(keys.items()))


class Page:
    """One page's session on its own thread and IO loop, optionally with cookies (the
    session token carries them, as a browser's page does)."""

    def __init__(self, url: str, arguments: dict[str, str], cookies: dict[str, str] | None = None):
        self.url, self.arguments, self.cookies = url, arguments, cookies or {}
        self.ready = threading.Event()
        self.failed: str | None = None
        self.session = self.loop = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Page:
        self._thread.start()
        return self

    def _session(self):
        from bokeh.client.session import ClientSession
        from bokeh.client.util import websocket_url_for_server_url
        from bokeh.util.token import generate_jwt_token, generate_session_id

        cookies = self.cookies
        send_cookies_from_this_thread(cookies)  # the websocket's request carries them

        class WithCookies(ClientSession):
            @property
            def token(self) -> str:
                return generate_jwt_token(self.id, extra_payload={"cookies": cookies})

        session = WithCookies(
            session_id=generate_session_id(),
            websocket_url=websocket_url_for_server_url(self.url),
            io_loop=self.loop,
            arguments=self.arguments,
        )
        pull_document(session)
        return session

    def _run(self) -> None:
        from bokeh.events import DocumentReady
        from tornado.ioloop import IOLoop

        try:
            self.loop = IOLoop()
            self.session = self._session()
            if not self.session.connected:
                raise RuntimeError(f"connection refused: {self.session.error_detail}")
            send_without_delay(self.session)
            self.found(self.session.document)
            self.session.document.callbacks.send_event(DocumentReady())  # onload: joins
        except Exception as exc:  # one failed page is a counted error, not a crash
            self.failed = f"{type(exc).__name__}: {exc}"
            self.ready.set()
            return
        self.ready.set()
        try:
            loop_until_closed(self.session)
        except Exception as exc:  # noqa: BLE001
            self.failed = f"loop: {exc}"

    def found(self, doc) -> None:
        """Find this page's models once the document has arrived (on its loop)."""

    def call(self, work) -> None:
        if self.loop is not None:
            self.loop.add_callback(work)

    def close(self) -> None:
        if self.loop is not None and self.session is not None:
            self.loop.add_callback(self.session.close)


def _text(model) -> str:
    return html.unescape(str(getattr(model, "text", "") or ""))


def _classed(doc, css: str):
    return [m for m in doc.models if css in (getattr(m, "css_classes", None) or [])]


class Student(Page):
    def found(self, doc) -> None:
        self.step_seen: dict[int, float] = {}
        self.heading = _classed(doc, "lab-lesson-pos")[0]
        self.choices = next(
            m for m in doc.models if type(m).__name__ == "RadioGroup" and m.labels is not None
        )
        self.heading.on_change("text", self._heading)
        self._heading(None, None, None)

    def _heading(self, attr, old, new) -> None:
        match = STEP_HEADING.search(_text(self.heading))
        if match and int(match.group(1)) not in self.step_seen:
            self.step_seen[int(match.group(1))] = time.time()

    def vote(self, choice: int) -> float:
        sent = time.time()

        def work():
            self.choices.active = choice

        self.call(work)
        return sent


class Teacher(Page):
    def found(self, doc) -> None:
        self.updates: list[tuple[float, int]] = []
        self.votes = None
        self.buttons = {m.label: m for m in doc.models if type(m).__name__ == "Button" and m.label}
        self._doc = doc
        # The page builds its chart when the class first has a step: watch for it.
        doc.on_change(lambda event: self._find_votes())
        self._find_votes()

    def _find_votes(self) -> None:
        if self.votes is None:
            self.votes = self._doc.select_one({"name": "class_votes"})
            if self.votes is not None:
                self.votes.on_change("data", self._counted)
                self._counted(None, None, None)

    def _counted(self, attr, old, new) -> None:
        self.updates.append((time.time(), int(sum(self.votes.data.get("count", [])))))

    def joined(self) -> int:
        return self._count(JOINED)

    def arrived(self) -> int:
        """How many students the teacher's page says are on the class's step."""
        return self._count(ARRIVED)

    def _count(self, pattern) -> int:
        for model in self._doc.models:
            match = pattern.search(_text(model))
            if match:
                return int(match.group(1))
        return 0

    def press(self, label: str) -> float:
        from bokeh.events import ButtonClick

        button = self.buttons[label]
        sent = time.time()
        self.call(lambda: self._doc.callbacks.send_event(ButtonClick(button)))
        return sent


def _wait(condition, what: str, deadline: float) -> None:
    while not condition():
        if time.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


def percentiles(values_ms) -> dict:
    if not values_ms:
        return {"n": 0}
    arr = np.asarray(values_ms)
    return {
        "n": len(arr),
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "max": float(arr.max()),
    }


def open_students(
    app_url: str, code: str, students: int, concurrency: int, languages: tuple[str, ...]
) -> list[Student]:
    """`students` pages joined to class `code`, `concurrency` opening at once; with
    `languages`, each opens the link with the next one's `?lang=`."""

    def open_one(i):
        arguments = {"class": code}
        if languages:
            arguments["lang"] = languages[i % len(languages)]
        page = Student(app_url, arguments).start()
        page.ready.wait(120)
        return page

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(open_one, range(students)))


def drive(
    app_url: str,
    students: int,
    steps: int = 2,
    concurrency: int = 8,
    max_seconds: float = 600,
    languages: tuple[str, ...] = (),
) -> dict:
    """Run one class against `app_url` and return its figures (see the module's doc).
    `languages`: the students open the class link with these `?lang=` in turn (the teacher's
    page stays English); none: every page in the server's default."""
    register_models()
    deadline = time.time() + max_seconds
    code, key = start_class(app_url)
    teacher = Teacher(app_url, {"class": code}, {f"alab_teach_{code}": key}).start()
    teacher.ready.wait(60)
    if teacher.failed:
        raise RuntimeError(f"teacher: {teacher.failed}")
    opened = time.time()
    pages = open_students(app_url, code, students, concurrency, languages)
    open_s = time.time() - opened
    errors = [f"student: {p.failed}" for p in pages if p.failed]
    live = [p for p in pages if not p.failed]
    try:
        _wait(lambda: teacher.joined() >= len(live), f"{len(live)} students joined", deadline)
        shown_ms = []
        teacher.press("Load this step")
        # Every page already shows "Step 1" before the class has a step: wait, as the teacher
        # does, for the teacher's count of students on the step (else the first Next is pressed
        # while step 1 is still reaching the class, and measures both).
        _wait(lambda: teacher.arrived() >= len(live), "step 1 everywhere", deadline)
        for step in range(2, steps + 2):
            sent = teacher.press("Next ▶")
            _wait(lambda s=step: all(s in p.step_seen for p in live), f"step {step}", deadline)
            shown_ms += [(p.step_seen[step] - sent) * 1000 for p in live]
        n_choices = len(live[0].choices.labels) if live else 1
        teacher.updates.clear()
        sent_at = sorted(p.vote(i % n_choices) for i, p in enumerate(live))
        _wait(
            lambda: teacher.updates and teacher.updates[-1][1] >= len(live),
            "every vote on the teacher's chart",
            deadline,
        )
        vote_ms = []
        for rank, sent in enumerate(sent_at, start=1):
            when = next(t for t, total in teacher.updates if total >= rank)
            vote_ms.append(max(0.0, (when - sent) * 1000))
        counted = teacher.updates[-1][1]
        # What the teacher's chart showed, and when, from the first vote sent: how the votes
        # arrive (a steady climb, or one late batch) says where the wait is.
        chart_timeline = [(round((t - sent_at[0]) * 1000), n) for t, n in teacher.updates]
        votes_sent_over_ms = round((sent_at[-1] - sent_at[0]) * 1000)
    except TimeoutError as exc:
        errors.append(str(exc))
        chart_timeline, votes_sent_over_ms = [], None
        shown_ms, vote_ms = locals().get("shown_ms", []), []
        counted = teacher.updates[-1][1] if teacher.updates else 0
    finally:
        for page in (teacher, *pages):
            page.close()
    return {
        "url": app_url,
        "code": code,
        "students": students,
        "languages": list(languages),
        "joined": teacher.joined() if not teacher.failed else 0,
        "open_seconds": open_s,
        "next_to_shown_ms": percentiles(shown_ms),
        "vote_to_chart_ms": percentiles(vote_ms),
        "chart_timeline": chart_timeline,
        "votes_sent_over_ms": votes_sent_over_ms,
        "votes_sent": len(live),
        "votes_counted": counted,
        "errors": errors,
    }


def render(report: dict) -> str:
    def fig(name):
        f = report[name]
        if not f.get("n"):
            return "none measured"
        return f"p50 {f['p50']:.0f} ms, p95 {f['p95']:.0f} ms, max {f['max']:.0f} ms (n={f['n']})"

    lines = [
        f"class {report['code']} at {report['url']}: {report['students']} students"
        + (f" in {', '.join(report['languages'])}" if report.get("languages") else "")
        + ", "
        f"opened in {report['open_seconds']:.1f} s, {report['joined']} joined",
        f"  teacher's Next -> student's step shown: {fig('next_to_shown_ms')}",
        f"  student's vote -> teacher's chart:      {fig('vote_to_chart_ms')}",
        f"  votes counted: {report['votes_counted']} of {report['votes_sent']}",
        f"  the votes sent over {report.get('votes_sent_over_ms')} ms; the teacher's chart "
        "(ms from the first vote: total): "
        + ", ".join(f"{ms}: {n}" for ms, n in report.get("chart_timeline", [])[:20]),
        f"  errors: {len(report['errors'])}",
    ]
    lines += [f"    - {e}" for e in report["errors"][:10]]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.classload", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--target", required=True, help="the app's address, e.g. http://127.0.0.1:5006/app"
    )
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--steps", type=int, default=2, help="Next presses measured (default 2)")
    parser.add_argument("--concurrency", type=int, default=8, help="pages opening at once")
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument(
        "--languages", default="", help="the students' ?lang= in turn, e.g. en,es,zh-Hans,ar"
    )
    options = parser.parse_args(argv)
    try:
        require_loopback(options.target)
    except SystemExit as exc:
        raise SystemExit(f"classload: {exc}") from None
    languages = tuple(code for code in options.languages.split(",") if code)
    report = drive(
        options.target,
        options.students,
        options.steps,
        options.concurrency,
        options.max_seconds,
        languages,
    )
    print(render(report))
    ok = not report["errors"] and report["votes_counted"] == report["votes_sent"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
