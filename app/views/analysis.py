"""The two analysis panels: the implementation audit and "Why is it sharp?"."""

from __future__ import annotations

import html

import pandas as pd
import panel as pn
import param

import attention_lab_assets
from app.state.lab_state import LabState

CAUSE_NAMES = {
    "alignment": "Alignment (direction of q vs the winning key)",
    "key_norm": "Key norm (length of the winning key)",
    "dimension_scale": "Dimension (logit growth with d_k)",
    "temperature": "Temperature (sharpness control)",
}


STATUSES = ("pass", "fail", "n/a")

TABLE_CSS = attention_lab_assets.read_text("components", "check-tables.css")


def audit_headline(checks) -> str:
    """Passes, failures and checks that did not apply, each counted on its own."""
    counts = {status: [c.name for c in checks if c.status == status] for status in STATUSES}
    passed, failed, skipped = (len(counts[s]) for s in STATUSES)
    verb = "fails" if failed == 1 else "fail"
    head = f"**{passed} of {len(checks)} checks pass, {failed} {verb}"
    head += f", {skipped} not applicable.**" if skipped else ".**"
    if failed:
        head += f" Failed: {html.escape(', '.join(counts['fail']))}."
    if skipped:
        head += f" Not applicable here: {html.escape(', '.join(counts['n/a']))}."
    return (
        head + " A clean audit says the arithmetic keeps its promises, not that a route is right."
    )


def diagnosis_text(report) -> str:
    """The headline names the winner and the cause that carries the decision, strongest first."""
    name = html.escape(report.winner_label)
    head = f"**{name} holds {report.max_weight:.1%} of the weight.**"
    implicated = [f for f in report.ranked if f.implicated]
    if not implicated:
        head += " None of the tests below moves that weight by much." + _handover(report)
    else:
        first = implicated[0]
        if first.decides:
            head += (
                f" **{_cause(first)} carries the decision:** undoing it hands the route to "
                "another key."
            )
        else:
            head += (
                f" **{_cause(first)} has the largest effect:** {name}'s weight goes "
                f"{first.before:.3f} -> {first.after:.3f}." + _handover(report)
            )
    lines = [head, "Each row changes one thing and measures the top weight again, strongest first."]
    # A test that hands the route on is worth its line even when the top weight hardly moves.
    lines += [
        f"- {html.escape(f.note)}" for f in report.ranked if f.note and (f.implicated or f.decides)
    ]
    untested = [f for f in report.findings if not f.tested]
    if untested:
        lines.append("Not tested, because the change would do nothing here:")
        lines += [f"- {html.escape(f.note)}" for f in untested]
    return "\n\n".join(lines)


def _cause(finding) -> str:
    return html.escape(CAUSE_NAMES.get(finding.cause, finding.cause).split(" (")[0])


def _handover(report) -> str:
    """Whether any test hands the route to another key: said as the tests found it."""
    deciders = [f for f in report.ranked if f.decides and not f.implicated]
    if not deciders:
        return " No test hands this query's route to another key."
    tests = " and ".join(f"“{html.escape(f.perturbation)}”" for f in deciders)
    causes = " and ".join(_cause(f) for f in deciders)
    return (
        f" The test {tests} hands the route to another key, about as sharply: "
        f"{causes} picks which key wins, not how sharp the route is."
    )


def _run_safely(what: str, fn):
    """Run an analysis; a failure becomes a message, never a traceback in the page."""
    try:
        return fn(), ""
    except Exception as exc:  # noqa: BLE001 - the page shows the reason instead
        return None, f"{what} could not run: {type(exc).__name__}: {exc}"


class AuditView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab the audit checks")

    def __init__(self, state, **params):
        super().__init__(state=state, **params)
        self.button = pn.widgets.Button(label="Run the audit", color="primary")
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
        checks, problem = _run_safely("The audit", self.state.run_audit)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        rows = [
            {
                "check": c.name,
                "result": c.status,
                "error": f"{c.error:.2e}" if c.applicable else "",
                "detail": c.detail,
            }
            for c in checks
        ]
        self.table.object = pd.DataFrame(rows)
        self.table.visible = True
        self.result.object = audit_headline(checks)

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
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab it explains")

    def __init__(self, state, **params):
        super().__init__(state=state, **params)
        self.button = pn.widgets.Button(label="Why is it sharp?", color="primary")
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
        report, problem = _run_safely("The diagnosis", self.state.diagnose)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        rows = [
            {
                "cause": CAUSE_NAMES.get(f.cause, f.cause),
                "test": f.perturbation,
                "before": f"{f.before:.3f}",
                "after": f"{f.after:.3f}",
                "implicated": ("yes, decides the winner" if f.decides else "yes")
                if f.implicated
                else ("no, but decides the winner" if f.decides else "no"),
            }
            for f in report.ranked
        ]
        self.table.object = pd.DataFrame(rows)
        self.table.visible = bool(rows)
        self.result.object = diagnosis_text(report)

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
