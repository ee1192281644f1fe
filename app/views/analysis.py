"""The two analysis panels: the implementation audit and "Why is it sharp?"."""

from __future__ import annotations

import html

import pandas as pd
import panel as pn

CAUSE_NAMES = {
    "alignment": "Alignment (direction of q vs the winning key)",
    "key_norm": "Key norm (length of the winning key)",
    "dimension_scale": "Dimension (logit growth with d_k)",
    "temperature": "Temperature (sharpness control)",
}


TABLE_CSS = """
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { padding: 4px 6px; text-align: left !important; vertical-align: top;
         border-bottom: 1px solid #ddd; }
"""


def _run_safely(what: str, fn):
    """Run an analysis; a failure becomes a message, never a traceback in the page."""
    try:
        return fn(), ""
    except Exception as exc:  # noqa: BLE001 - the page shows the reason instead
        return None, f"{what} could not run: {type(exc).__name__}: {exc}"


class AuditView(pn.viewable.Viewer):
    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self.button = pn.widgets.Button(label="Run the audit", button_type="primary")
        self.button.on_click(self.run)
        self.result = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.table = pn.pane.DataFrame(
            pd.DataFrame(columns=["check", "result", "error", "detail"]),
            index=False,
            sizing_mode="stretch_width",
            visible=False,
            stylesheets=[TABLE_CSS],
        )

    def run(self, _event=None) -> None:
        checks, problem = _run_safely("The audit", self._state.run_audit)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        rows = [
            {
                "check": c.name,
                "result": getattr(c, "status", "pass" if c.passed else "fail"),
                "error": f"{c.error:.2e}",
                "detail": c.detail,
            }
            for c in checks
        ]
        failed = [r["check"] for r in rows if r["result"] == "fail"]
        self.table.object = pd.DataFrame(rows)
        self.table.visible = True
        self.result.object = (
            f"**{len(rows) - len(failed)} of {len(rows)} checks pass.**"
            if not failed
            else f"**{len(failed)} check(s) fail:** {html.escape(', '.join(failed))}"
        ) + " A clean audit says the arithmetic keeps its promises, not that a route is right."

    def __panel__(self):
        return pn.Column(
            pn.pane.Markdown(
                "Checks the current configuration against the rules attention must keep: "
                "weights sum to one, masked keys get nothing, swapping values leaves the route "
                "alone, shifting every logit changes nothing, and the kernels agree.",
                sizing_mode="stretch_width",
            ),
            self.button,
            self.result,
            self.table,
            sizing_mode="stretch_width",
        )


class DiagnosisView(pn.viewable.Viewer):
    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self.button = pn.widgets.Button(label="Why is it sharp?", button_type="primary")
        self.button.on_click(self.run)
        self.result = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.table = pn.pane.DataFrame(
            pd.DataFrame(columns=["cause", "test", "before", "after", "implicated"]),
            index=False,
            sizing_mode="stretch_width",
            visible=False,
            stylesheets=[TABLE_CSS],
        )

    def run(self, _event=None) -> None:
        report, problem = _run_safely("The diagnosis", self._state.diagnose)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        labels = self._state.snapshot.labels
        winner = int(report.winner)
        name = labels[winner] if 0 <= winner < len(labels) else f"key {winner + 1}"
        rows, notes = [], []
        for f in report.findings:
            rows.append(
                {
                    "cause": CAUSE_NAMES.get(f.cause, f.cause),
                    "test": f.perturbation,
                    "before": f"{f.before:.3f}",
                    "after": f"{f.after:.3f}",
                    "implicated": "yes" if f.implicated else "no",
                }
            )
            if f.implicated and f.note:
                notes.append(f"- {html.escape(f.note)}")
        self.table.object = pd.DataFrame(rows)
        self.table.visible = True
        head = (
            f"**{html.escape(name)} holds {report.max_weight:.1%} of the weight.** "
            "Each row changes one thing and measures the top weight again."
        )
        self.result.object = head + ("\n\n" + "\n".join(notes) if notes else "")

    def __panel__(self):
        return pn.Column(
            pn.pane.Markdown(
                "A sharp route has four usual suspects. Each is tested by one perturbation: "
                "normalise the vectors, rotate only the query, undo the dimension growth, "
                "raise the temperature.",
                sizing_mode="stretch_width",
            ),
            self.button,
            self.result,
            self.table,
            sizing_mode="stretch_width",
        )
