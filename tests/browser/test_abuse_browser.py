"""A hostile room in Chromium (issue #45), against a lab process of its own on loopback, where
every page shares one address as a school's class does: one student's typos and bogus device
requests lock out no classmate, a seated student is never refused, the teacher sees what was
refused, a page on another port of the same host cannot read the teacher's key, and a second
device becomes a teacher only once the teacher approves its pairing number."""

from __future__ import annotations

import http.server
import threading

import pytest

from app.classroom import store as rules
from tools.harness import serve_lab

from .labpage import LOADED, LabPage, page_opener
from .test_accessibility import blocking
from .test_class_browser import start_class

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def own_lab(tmp_path_factory):
    server = serve_lab(tmp_path_factory.mktemp("abuse-browser") / "server.log")
    yield server
    server.stop()


@pytest.fixture
def open_own(chromium, own_lab):
    # A list of problems of its own: the same-site page below provokes console errors (the
    # refused requests) that the suite's shared list must not collect.
    opener, close_all = page_opener(chromium, own_lab, [])
    yield lambda query="", *, more_settings=False: opener(query, more_settings=more_settings)
    close_all()


def type_code(lab: LabPage, code: str) -> None:
    page = lab.page
    box = page.get_by_placeholder("e.g. ACE F47")
    for _ in range(3):  # on a loaded machine a click on a page still settling can go unheard
        if box.count() and box.is_visible():
            break
        page.locator(".lab-class-join").get_by_role("button").first.click()
        try:
            box.wait_for(state="visible", timeout=10000)
        except Exception:  # noqa: BLE001 - Playwright's timeout: click again
            continue
    box.fill(code)
    page.get_by_role("button", name="Join", exact=True).click()


def test_one_students_typos_lock_out_no_classmate_and_the_teacher_sees_them(open_own, own_lab):
    teacher, code = start_class(open_own)
    seated = open_own(f"?class={code}")
    seated.wait_until(lambda: seated.shows(f"In class {code}"), "the seated student", 30)
    typist = open_own("")
    wrong = "AAAAAA" if code != "AAAAAA" else "CCCCCC"
    for n in range(rules.JOIN_FAILURES_PER_BROWSER):
        type_code(typist, wrong)
        typist.wait_until(
            lambda n=n: typist.page.locator(".lab-class-problem").count() > 0,
            f"wrong code {n + 1} named",
            30,
        )
    # Bogus second-device requests from the same browser count against nobody.
    for _ in range(12):
        assert typist.page.request.get(f"{own_lab.base}/class/device?code={wrong}").status == 403
    type_code(typist, code)
    typist.wait_until(
        lambda: typist.shows("too many wrong codes from this browser"), "the typist held", 30
    )
    classmate = open_own("")
    type_code(classmate, code.lower())
    classmate.wait_until(lambda: classmate.shows(f"In class {code}"), "the classmate in", 30)
    seated.page.reload()
    seated.page.wait_for_function(LOADED, timeout=30000)
    seated.wait_until(lambda: seated.shows(f"In class {code}"), "the seated student back", 30)
    # The teacher's More card counts the refused codes from the class's own network.
    teacher.page.get_by_text("More: the door, seats, devices, end the class").click()
    refused = teacher.page.locator("[data-refused-wrong]")
    refused.wait_for(state="visible", timeout=30000)
    assert int(refused.get_attribute("data-refused-wrong")) >= rules.JOIN_FAILURES_PER_BROWSER


class _SameHostPage(http.server.BaseHTTPRequestHandler):
    """Another site on the same host (another port): its page tries every way to the key."""

    lab = ""

    def do_GET(self):
        script = f"""
        <script>
        window.report = {{}};
        (async () => {{
          // A script tag runs the lab's embedding script here, with the teacher's cookies
          // sent along (same site): it would hand this page a session token.
          await new Promise(done => {{
            const tag = document.createElement('script');
            tag.src = '{self.lab}/app/autoload.js?bokeh-autoload-element=x';
            tag.onload = () => {{ window.report.script = 'ran'; done(); }};
            tag.onerror = () => {{ window.report.script = 'blocked'; done(); }};
            document.head.appendChild(tag);
          }});
          for (const path of ['/app/autoload.js?bokeh-autoload-element=x', '/app']) {{
            try {{
              const r = await fetch('{self.lab}' + path, {{credentials: 'include'}});
              window.report[path] = 'read:' + (await r.text());
            }} catch (e) {{ window.report[path] = 'blocked'; }}
          }}
          window.done = true;
        }})();
        </script>"""
        body = f"<!doctype html><title>elsewhere</title>{script}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_page_on_another_port_of_the_host_cannot_read_the_teachers_key(open_own, own_lab):
    teacher, code = start_class(open_own)
    context = teacher.page.context
    key = next(c["value"] for c in context.cookies() if c["name"] == f"alab_teach_{code}")
    handler = type("Elsewhere", (_SameHostPage,), {"lab": own_lab.base})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        other = teacher.page  # the teacher's own browser goes to the other site: same cookies
        other.goto(f"http://localhost:{server.server_address[1]}/")  # same site, other port
        other.wait_for_function("() => window.done === true", timeout=30000)
        report = other.evaluate("() => window.report")
    finally:
        server.shutdown()
    assert all(key not in value for value in report.values()), report
    assert all(value == "blocked" for value in report.values()), report


def test_a_second_device_teaches_once_the_projected_page_approves_its_number(open_own):
    teacher, code = start_class(open_own)
    phone = open_own(f"?class={code}")
    phone.wait_until(lambda: phone.shows(f"In class {code}"), "the phone in class", 30)
    # By keyboard: the button takes focus and Enter presses it.
    ask = phone.page.get_by_role("button", name="I teach this class: pace from this device")
    ask.focus()
    phone.page.keyboard.press("Enter")
    pairing = phone.wait_until(
        lambda: (
            phone.page.locator("[data-pairing]").first.get_attribute("data-pairing")
            if phone.page.locator("[data-pairing]").count()
            else None
        ),
        "the pairing number",
        30,
    )
    # The teacher's status line says a device asks; the number and the answer are in More.
    teacher.page.locator("[data-class-asking='1']").wait_for(state="visible", timeout=30000)
    teacher.page.get_by_text("More: the door, seats, devices, end the class").click()
    teacher.wait_until(lambda: teacher.shows(pairing), "the request on the teacher's page", 30)
    # The card's new controls (the request, the door, seats, devices) and the asking phone
    # leave axe nothing critical or serious.
    assert blocking(teacher.page) == [] and blocking(phone.page) == []
    # Nothing on the projected page would make anyone a teacher: no link, no QR code.
    assert "class/device" not in teacher.page.content()
    teacher.page.get_by_role("button", name="Approve", exact=True).click()
    phone.wait_until(lambda: phone.shows(f"You teach class {code}"), "the phone teaching", 30)
    assert any(c["name"] == f"alab_teach_{code}" for c in phone.page.context.cookies())
