"""Benchmark of the trained-model source (a script, not a test): `python -m tools.bench_model`.

Reports medians and 95th percentiles from one run:
1. server side, in process: opening the model source in a page (its views built, the head drawn),
   each head control change (recompute and redraw), and each of the seed's experiments;
2. with --browser: in headless Chromium, from a key press on "Rotate this head's query" to the
   redrawn `prediction` data, and from pressing Run on an experiment to the new table row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tools.bench_ui import key_press_to_redraw, lab_in_document, lab_page, median_and_p95_ms
from tools.bokeh_internals import take_held_events

# Table rows of the experiments table, looking through every shadow root.
ROWS_AT_LEAST = """n => {
  const count = root => {
    let c = root.querySelectorAll('table.lab-experiments tr.run').length;
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) c += count(el.shadowRoot);
    return c;
  };
  return count(document) >= n;
}"""


def _fmt(stats: tuple[float, float]) -> str:
    return f"{stats[0]:7.2f} / {stats[1]:7.2f}"


def server_side(repeats: int) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    opens = []
    for _ in range(max(5, repeats // 10)):
        doc, lab, _pn = lab_in_document()
        t0 = time.perf_counter()
        lab.sources.source = "model"
        opens.append(time.perf_counter() - t0)
    out["open the model source (first time in a page)"] = median_and_p95_ms(opens)

    m = lab.sources.model
    changes = {
        "head temperature": [{"head_temperature": 2.0}, {"head_temperature": 1.0}],
        "rotate the query": [{"rotate": 30.0}, {"rotate": 0.0}],
        "mask a position": [{"masked": [3]}, {"masked": []}],
        "ablate a head": [{"ablated": ["1.1"]}, {"ablated": []}],
        "another program": [{"text": "a=5; b=7; a=3; ?a"}, {"text": m.text}],
    }
    for name, pair in changes.items():
        samples = []
        for i in range(repeats + 5):
            doc.hold("combine")
            t0 = time.perf_counter()
            m.try_update(**pair[i % 2])
            elapsed = lab.drawn_at - t0
            take_held_events(doc)
            doc.unhold()
            if m.error:
                raise RuntimeError(f"{name}: the model refused the change: {m.error}")
            if i >= 5:
                samples.append(elapsed)
        out[f"change: {name}"] = median_and_p95_ms(samples)

    from engine.trained.experiments import EXPERIMENTS

    start = m.text
    for name in EXPERIMENTS:
        samples = []
        for _ in range(max(5, repeats // 4)):
            m.try_update(text=start, extra=[])  # an experiment shows its "after": start over
            t0 = time.perf_counter()
            if m.run_experiment(name) is None:
                raise RuntimeError(f"{name}: {m.error}")
            samples.append(time.perf_counter() - t0)
        m.clear_experiments()
        out[f"experiment: {name}"] = median_and_p95_ms(samples)
    return out


def browser(repeats: int) -> dict[str, tuple[float, float]]:
    loaded = (
        "() => window.Bokeh && Bokeh.documents.length > 0 && "
        "Bokeh.documents[0].get_model_by_name('prediction') !== null && "
        "Bokeh.documents[0].get_model_by_name('prediction').data.token.length > 0"
    )
    runs = []
    viewport = {"width": 1920, "height": 1080}
    with lab_page("?model=binding", loaded, viewport=viewport) as page:
        rotate = key_press_to_redraw(
            page, "prediction", "Rotate this head's query", ("PageUp", "PageDown"), repeats
        )
        page.get_by_text("Experiments", exact=True).first.click()
        run = page.get_by_role("button", name="Run", exact=True)
        run.wait_for(timeout=10000)
        for i in range(max(5, repeats // 2)):
            t0 = time.perf_counter()
            run.click()
            page.wait_for_function(ROWS_AT_LEAST, arg=i + 1, timeout=10000)
            runs.append(time.perf_counter() - t0)
    return {
        "key press on the query rotation -> new prediction drawn": median_and_p95_ms(rotate),
        "click Run (an experiment) -> new table row": median_and_p95_ms(runs),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--browser", action="store_true", help="also time the page in Chromium")
    args = parser.parse_args(argv)
    np.set_printoptions(precision=3)
    print("server side (ms, median / p95)")
    for name, stats in server_side(args.repeats).items():
        print(f"  {_fmt(stats)}  {name}")
    if args.browser:
        print("headless Chromium (ms, median / p95)")
        for name, stats in browser(max(10, args.repeats // 3)).items():
            print(f"  {_fmt(stats)}  {name}")


if __name__ == "__main__":
    main()
