"""A class across replicas, all real: redis-server, `attention-lab` replicas with their store in
it, the shipped HAProxy in front (the run's replica room, tests/conftest.py's `replica_room`,
shared with tests/server/test_balancer.py) and Chromium pages for the teacher and two students.
Each page is pinned to a replica by the balancer's own cookie (SRV), set before the first
request, so the test knows who is where: the teacher and one student on r1, the other student
on r2, so every step and vote crosses from one process to the other through Redis.

Then the faults a class meets: r2 is killed mid-class (its student comes back through the
balancer on another replica, rejoins from the address and is still one student with one vote),
and Redis is killed and restarted on its append-only file (pages say the class connection is
lost, keep working, and catch up with the teacher once it is back). The next module to use the
room starts r2 again (`ReplicaRoom.heal`).
"""

from __future__ import annotations

import pytest
import redis
from labserver import LAB_READY_JS
from waiting import wait_until

from app.views.lesson_panel import ALL_LESSONS
from tools.harness import ReplicaRoom

pytestmark = [pytest.mark.server, pytest.mark.browser, pytest.mark.xdist_group("replica_room")]


class Class:
    """The run's replica room as this module reads it: errors logged since the module began."""

    def __init__(self, room: ReplicaRoom):
        self.room, self.redis, self.replicas = room, room.redis, room.replicas
        self._seen = {server.log_path: len(server.log()) for server in room.replicas.values()}

    @property
    def base(self) -> str:
        return self.room.base

    def errors(self) -> list[str]:
        return [
            f"{name}: {line}"
            for name, server in self.replicas.items()
            for line in server.log()[self._seen.get(server.log_path, 0) :].splitlines()
            if "Traceback" in line or " ERROR " in line
        ]


@pytest.fixture(scope="module")
def classroom(replica_room):
    """The run's replica room (tests/conftest.py): Redis as the class store, whole again."""
    replica_room.heal()  # whatever an earlier module stopped
    assert replica_room.redis is not None and {"r1", "r2"} <= set(replica_room.names)
    return Class(replica_room)


def pinned_page(chromium, room: Class, replica: str, query: str):
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    context.add_cookies([{"name": "SRV", "value": replica, "url": room.base}])
    page = context.new_page()
    page.goto(f"{room.base}/app{query}", wait_until="load", timeout=90_000)
    page.wait_for_function(LAB_READY_JS, timeout=90_000)
    return page


def shows(page, text: str, exact: bool = False) -> bool:
    found = page.get_by_text(text, exact=exact)
    return any(found.nth(i).is_visible() for i in range(found.count()))


def wait_shows(page, text: str, timeout: float = 60, exact: bool = False) -> None:
    wait_until(
        lambda: shows(page, text, exact),
        f"the page to show {text!r}",
        timeout,
        pause=lambda s: page.wait_for_timeout(s * 1000),
    )


VOTES_JS = """() => { const m = Bokeh.documents[0].get_model_by_name('class_votes');
  if (m === null) return null; const d = m.data;
  const get = k => Array.from(d instanceof Map ? d.get(k) : d[k]);
  return [get('choice'), get('count')]; }"""


def votes(page) -> dict[str, int]:
    found = page.evaluate(VOTES_JS)
    return dict(zip(*found, strict=True)) if found else {}


def step_text(number: int) -> str:
    return f"Step {number} of {len(ALL_LESSONS)}"


PAGE_STATE_JS = """() => {
  const text = sel => Array.from(document.querySelectorAll(sel), e => e.innerText.trim());
  const deep = sel => { const out = []; const walk = root => { root.querySelectorAll('*')
      .forEach(e => { if (e.matches(sel)) out.push(e); if (e.shadowRoot) walk(e.shadowRoot); }); };
    walk(document); return out; };
  return { url: location.href,
           status: deep('.lab-class-status').map(e => e.innerText.trim()),
           problem: deep('.lab-class-problem').map(e => e.innerText.trim()),
           checked: deep('input[type=radio]:checked').map(e => e.parentElement.innerText.trim()),
           title: text('title') }; }"""


def class_report(room: Class, code: str, pages: dict) -> str:
    """What every part holds, for a failure: each page's class line and chosen radio, the
    votes Redis has, and the replicas' errors, so a CI failure says where a vote stopped."""
    lines = []
    for name, page in pages.items():
        try:
            lines.append(f"{name}: {page.evaluate(PAGE_STATE_JS)}")
        except Exception as exc:  # noqa: BLE001 - a report must not hide the failure
            lines.append(f"{name}: unreadable ({exc})")
    try:
        r = redis.Redis.from_url(room.redis.url, decode_responses=True, socket_timeout=3)
        for part in ("meta", "students", "votes"):
            key = f"alab:class:{code}:{part}"
            lines.append(
                f"redis {part}: {r.hgetall(key) if r.type(key) == 'hash' else r.type(key)}"
            )
    except redis.RedisError as exc:
        lines.append(f"redis: unreadable ({exc})")
    lines += room.errors()[-20:]
    return "\n".join(lines)


def predict(page, choice: str) -> None:
    """Choose a prediction the way a student does, and see the radio take it: a click that
    lands while a slow page is still laying out the step is repeated, not lost."""
    page.get_by_role("radio", name=choice, exact=True).check(timeout=30_000)


def test_a_class_spans_replicas_and_survives_a_lost_replica_and_a_redis_restart(
    classroom, chromium
):
    room = classroom
    teacher = pinned_page(chromium, room, "r1", "")
    teacher.locator("button.lab-teach").click()
    teacher.wait_for_url("**/app?class=*", timeout=30_000)
    teacher.wait_for_function(LAB_READY_JS, timeout=90_000)
    code = teacher.locator(".lab-join-code").get_attribute("data-class-code")
    teacher.get_by_role("button", name="Start the lesson").click()
    here = pinned_page(chromium, room, "r1", f"?class={code}")
    there = pinned_page(chromium, room, "r2", f"?class={code}")
    for page, replica in ((here, "r1"), (there, "r2")):
        assert {c["name"]: c["value"] for c in page.context.cookies()}["SRV"] == replica

    # Pacing crosses replicas: the teacher on r1 moves the student on r2.
    teacher.get_by_role("button", name="Load this step").click()
    teacher.get_by_role("button", name="Next ▶").click()
    for page in (here, there):
        wait_shows(page, step_text(2))
    step = ALL_LESSONS[1]
    right = step.choices[step.answer]
    wrong = step.choices[(step.answer + 1) % len(step.choices)]
    pages = {"teacher": teacher, "student on r1": here, "student on r2": there}
    predict(here, right)
    predict(there, wrong)
    try:
        for page in (here, there):  # stored: the store acknowledged it
            wait_shows(page, "your prediction is counted")
        wait_until(
            lambda: sum(votes(teacher).values()) == 2,
            "both votes on the teacher's chart",
            60,
            pause=lambda s: teacher.wait_for_timeout(s * 1000),
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{class_report(room, code, pages)}") from None

    # r2 dies mid-class: its student comes back through the balancer, still one student.
    there.evaluate("() => { window.__sameDocument = true; }")
    room.replicas["r2"].process.kill()
    room.replicas["r2"].process.wait(timeout=20)
    there.wait_for_function("() => window.__sameDocument === undefined", timeout=90_000)
    there.wait_for_function(LAB_READY_JS, timeout=90_000)
    assert {c["name"]: c["value"] for c in there.context.cookies()}["SRV"] in {"r1", "r3"}
    try:
        # The address says the class once the page has rejoined it (it may first say the step).
        wait_until(
            lambda: f"class={code}" in there.url,
            "the class in the moved page's address",
            30,
            pause=lambda s: there.wait_for_timeout(s * 1000),
        )
        wait_shows(there, step_text(2))
        wait_shows(there, "your prediction is counted")
    except AssertionError as exc:
        raise AssertionError(f"{exc} ({there.url})\n{class_report(room, code, pages)}") from None
    predict(there, right)  # a changed mind, after the move
    try:
        wait_until(
            lambda: votes(teacher).get(right) == 2 and sum(votes(teacher).values()) == 2,
            "the changed vote replacing the old one",
            60,
            pause=lambda s: teacher.wait_for_timeout(s * 1000),
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{class_report(room, code, pages)}") from None
    joined = teacher.locator("[data-class-joined]").first
    # Two students, as the store counts them (a reconnect's unadopted session never joins).
    students = redis.Redis.from_url(room.redis.url).hlen(f"alab:class:{code}:students")
    assert joined.get_attribute("data-class-joined") == "2" and students == 2

    # Redis goes down: pages keep working and say so; back on its append-only file, the
    # class is all there and the teacher's next step reaches every student again.
    room.redis.kill()
    for page in (teacher, here):
        wait_shows(page, "connection lost, retrying")
    room.redis.restart()
    for page in (teacher, here):
        wait_shows(page, "live", exact=True)
    teacher.get_by_role("button", name="Next ▶").click()
    for page in (here, there):
        wait_shows(page, step_text(3))
    teacher.get_by_role("button", name="Previous", exact=False).click()
    wait_until(
        lambda: votes(teacher).get(right) == 2,
        "the votes of step 2, kept through the restart",
        60,
        pause=lambda s: teacher.wait_for_timeout(s * 1000),
    )
    for page in (teacher, here, there):
        page.context.close()
    assert room.errors() == []
