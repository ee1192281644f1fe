"""A tiny run of the load test: real sessions, a control moved, figures reported, no errors.

Times are printed by the tool, never asserted here: this machine is shared and noisy.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from labserver import ROOT, clean_env

pytestmark = pytest.mark.server


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
    assert crowd["opened"] == 3
    assert crowd["creation_rate_per_s"] > 0
    assert crowd["changes"] > 0 and crowd["latency_p50_ms"] > 0
    assert crowd["latency_p95_ms"] >= crowd["latency_p50_ms"]
    assert crowd["rss_with_sessions_mb"] > 0 and crowd["rss_per_session_mb"] is not None
    # Both sides of the measurement report their CPU, so a saturated client is visible.
    assert crowd["server_cpu_ms_per_change"] > 0 and crowd["client_cpu_ms_per_change"] > 0
    assert 0 < crowd["server_cpu_share_while_busy"] and 0 < crowd["client_cpu_share_while_busy"]
    waves = report["phases"]["waves"]
    assert len(waves["rss_after_each_wave_mb"]) == 2
    assert waves["growth_first_to_last_pct"] is not None
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


def test_load_run_stops_at_its_time_budget_and_reports_what_it_measured(tmp_path):
    out = tmp_path / "cut.json"
    command = [sys.executable, "-m", "tools.loadtest", "--sessions", "80", "--busy", "2"]
    command += ["--max-seconds", "20", "--settle-seconds", "1", "--json", str(out)]
    result = subprocess.run(
        command, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=200
    )
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert any("time budget" in error for error in report["errors"])
    crowd = report["phases"]["crowd"]
    assert 0 < crowd["opened"] < 80
    assert crowd["rss_per_session_mb"] is not None
