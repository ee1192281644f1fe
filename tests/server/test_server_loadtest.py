"""A tiny run of the load test: real sessions, a control moved, figures reported, no errors.

Times are printed by the tool, never asserted here: this machine is shared and noisy. What is
asserted is what the run must hold on any machine: the counts it was asked for, every figure
present as a number, and the figures that follow from others computed from them.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time

import pytest
from labserver import ROOT, clean_env

from tools import loadtest

pytestmark = pytest.mark.server

CROWD_FIGURES = (
    "creation_rate_per_s",
    "rss_server_started_mb",
    "rss_base_mb",
    "rss_with_sessions_mb",
    "rss_per_session_mb",
    "server_cpu_s_per_session_open",
    "achieved_rate_per_session",
    "client_cpu_ms_per_change",
    "client_cpu_share_while_busy",
    "server_cpu_ms_per_change",
    "server_cpu_share_while_busy",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_max_ms",
    "rss_while_busy_mb",
    "rss_after_close_mb",
)


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def test_small_load_run_reports_every_figure_without_errors(tmp_path):
    out = tmp_path / "load.json"
    command = [sys.executable, "-m", "tools.loadtest", "--sessions", "3", "--busy", "2"]
    command += ["--busy-seconds", "2", "--waves", "2", "--wave-sessions", "1"]
    command += ["--settle-seconds", "2", "--max-seconds", "200", "--json", str(out)]
    result = subprocess.run(
        command, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=280
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert report["errors"] == []
    crowd = report["phases"]["crowd"]
    assert crowd["sessions"] == 3 and crowd["opened"] == 3 and crowd["busy_sessions"] == 2
    # Both sides of the measurement report their CPU (so a saturated client is visible), and
    # every other figure is there, as a number.
    missing = {key: crowd.get(key) for key in CROWD_FIGURES if not _number(crowd.get(key))}
    assert missing == {}, f"figures missing or not numbers: {missing}"
    # Figures that follow from the others.
    per_session = (crowd["rss_with_sessions_mb"] - crowd["rss_base_mb"]) / crowd["opened"]
    assert crowd["rss_per_session_mb"] == pytest.approx(per_session)
    # A reply is counted only for a change sent (an unanswered one is an error): each busy
    # session's first change at least, and the waves' sessions then sent one change each at
    # least on top of the crowd's.
    assert crowd["changes"] >= crowd["busy_sessions"]
    waves = report["phases"]["waves"]
    rss = waves["rss_after_each_wave_mb"]
    assert len(rss) == 2 and all(_number(value) for value in rss)
    assert report["changes_sent"] >= crowd["changes"] + 2 * 1
    assert waves["growth_first_to_last_pct"] == pytest.approx((rss[1] - rss[0]) / rss[0] * 100)
    assert "p95" in result.stdout and "errors                 0" in result.stdout


def test_load_tool_refuses_a_remote_target():
    result = subprocess.run(
        [sys.executable, "-m", "tools.loadtest", "--url", "http://192.0.2.10:5006/app"],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "loopback" in result.stderr


def test_load_run_stops_at_its_time_budget_and_reports_what_it_measured(
    lab, tmp_path, monkeypatch, capsys
):
    """The budget runs out after exactly five of the crowd's 80 sessions have started, on any
    machine: the run's clock is set past its deadline then, instead of hoping that 80 sessions
    take longer than 20 s to open."""
    runs: list[loadtest.Run] = []
    started = []
    real_init, real_start = loadtest.Run.__init__, loadtest.Student.start

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        runs.append(self)

    def start(self):
        real_start(self)
        started.append(self)
        if len(started) == 1 + 5:  # the warm-up session, then five of the crowd
            runs[0].deadline = -math.inf

    monkeypatch.setattr(loadtest.Run, "__init__", init)
    monkeypatch.setattr(loadtest.Student, "start", start)
    out = tmp_path / "cut.json"
    argv = ["--url", f"{lab.base}/app", "--server-pid", str(lab.process.pid)]
    argv += ["--sessions", "80", "--busy", "2", "--settle-seconds", "0", "--json", str(out)]
    assert loadtest.main(argv) == 1
    report = json.loads(out.read_text())
    assert report["errors"] == ["time budget of 240.0 s used up"], report["errors"]
    assert "time budget of 240.0 s used up" in capsys.readouterr().out
    crowd = report["phases"]["crowd"]
    assert crowd["opened"] == 5 and len(started) == 6
    # What it measured before the cut is reported; nothing after it ran.
    per_session = (crowd["rss_with_sessions_mb"] - crowd["rss_base_mb"]) / 5
    assert crowd["rss_per_session_mb"] == pytest.approx(per_session)
    assert "changes" not in crowd and "waves" not in report["phases"]


def _quantile(values, q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (NumPy's default,
    written out here so that the tool's figures are not checked with the tool's own call)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low = math.floor(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def test_the_load_tool_drives_a_class_and_counts_every_vote(lab, tmp_path, monkeypatch, capsys):
    """The class run's figures are the latencies the run measured: every sample the tool took is
    recorded on its way to its summary, and the summary is checked against them (not only that
    its p50 is below its p95, which held for any numbers the tool's percentile function made)."""
    from tools import classload

    samples: dict[int, list[float]] = {}
    real = classload.percentiles

    def recording(values_ms):
        samples[len(samples)] = [float(v) for v in values_ms]
        return real(values_ms)

    monkeypatch.setattr(classload, "percentiles", recording)
    out = tmp_path / "class.json"
    argv = ["--url", f"{lab.base}/app", "--server-pid", str(lab.process.pid)]
    argv += ["--class-size", "4", "--class-steps", "1", "--max-seconds", "200"]
    # Each student in another language: the step is read from "Paso 2 de 12" and "第 2 步"
    # alike, and every vote counts whatever language its choices were shown in.
    argv += ["--class-languages", "en,es,zh-Hans,ar"]
    started = time.monotonic()
    assert loadtest.main([*argv, "--json", str(out)]) == 0
    elapsed_ms = (time.monotonic() - started) * 1000
    report = json.loads(out.read_text())
    assert report["errors"] == [] and report["joined"] == 4
    assert report["votes_sent"] == report["votes_counted"] == 4
    printed = capsys.readouterr().out
    assert "votes counted: 4 of 4" in printed and "4 students in en, es, zh-Hans, ar" in printed
    # The tool summarises the Next latencies first, then the votes' (classload.drive).
    shown, votes = samples[0], samples[1]
    # One Next: each of the 4 students saw the step after the teacher sent it, within the run.
    assert len(shown) == 4 and all(0 < ms < elapsed_ms for ms in shown), (shown, elapsed_ms)
    # 4 votes, each on the teacher's chart within the run (the tool counts one that arrived
    # before its send was stamped as 0 ms).
    assert len(votes) == 4 and all(0 <= ms < elapsed_ms for ms in votes), (votes, elapsed_ms)
    for figure, raw in (("next_to_shown_ms", shown), ("vote_to_chart_ms", votes)):
        summary = report[figure]
        assert summary["n"] == len(raw)
        assert summary["p50"] == pytest.approx(_quantile(raw, 0.50)), (figure, raw)
        assert summary["p95"] == pytest.approx(_quantile(raw, 0.95)), (figure, raw)
        assert summary["max"] == max(raw), (figure, raw)


def test_the_class_tools_pull_builds_the_page_bokeh_pull_builds(lab):
    """classload's simulated pages pull their document in one walk (bokeh_internals.
    pull_document); what they get must be the document `ClientSession.pull()` gets: the same
    models by type, the same roots and title (that such a page sends its changes, the
    class run above shows: its votes are counted)."""
    from bokeh.client.session import ClientSession
    from bokeh.client.util import websocket_url_for_server_url
    from tornado.ioloop import IOLoop

    from tools import classload
    from tools.bokeh_internals import pull_document

    classload.register_models()

    def shape(doc):
        models = sorted(type(m).__name__ for m in doc.models)  # names hold a session counter
        return models, [type(r).__name__ for r in doc.roots], doc.title

    def pulled_with(pull):
        # On a thread of its own with its own loop, as classload's pages are: a worker of the
        # suite may have an asyncio loop running on its main thread (Playwright's).
        found = []

        def run():
            session = ClientSession(
                websocket_url=websocket_url_for_server_url(f"{lab.base}/app"), io_loop=IOLoop()
            )
            try:
                pull(session)
                found.append(shape(session.document))
            finally:
                session.close()

        thread = threading.Thread(target=run)
        thread.start()
        thread.join(60)
        assert found, f"{pull.__name__} pulled no document"
        return found[0]

    pulled = [pulled_with(ClientSession.pull), pulled_with(pull_document)]
    assert pulled[0] == pulled[1] and len(pulled[0][0]) > 200


def test_the_page_bench_sets_the_lab_beside_a_served_plain_panel_page():
    # tools/bench_page.py --served: the baseline page (tools/plain_page.py) must serve, carry
    # the control and source the load tool moves, and both servers must report their figures.
    from tools import bench_page

    figures = bench_page.served(sessions=2, rounds=1)
    for name in ("lab", "plain"):
        assert figures[name]["cpu"] > 0, figures
        assert math.isfinite(figures[name]["rss"]), figures
