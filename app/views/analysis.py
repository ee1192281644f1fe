"""The two analysis panels: the implementation audit and "Why is it sharp?"."""

from __future__ import annotations

import html

import pandas as pd
import panel as pn
import param

import attention_lab_assets
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.lab_state import LabState
from app.views.phrases import phrase_text
from engine.wording import Phrase, Scientific

CAUSE_NAMES = {
    "alignment": N_("Alignment (direction of q vs the winning key)"),
    "key_norm": N_("Key norm (length of the winning key)"),
    "dimension_scale": N_("Dimension (logit growth with d_k)"),
    "temperature": N_("Temperature (sharpness control)"),
}
# The short names, as the sentences say them (the part before " (" above).
CAUSE_SHORT = {
    "alignment": N_("Alignment"),
    "key_norm": N_("Key norm"),
    "dimension_scale": N_("Dimension"),
    "temperature": N_("Temperature"),
}
STATUSES = ("pass", "fail", "n/a")
# A check's result as the audit's table shows it (the engine's status is its key).
STATUS_NAMES = {"pass": N_("pass"), "fail": N_("fail"), "n/a": N_("n/a")}
TABLE_CSS = attention_lab_assets.read_text("components", "check-tables.css")


def _percent(x: float, tr: Translator) -> str:
    # English exactly as before (Python's rounding); another language writes its own way.
    return f"{x:.1%}" if tr.code == "en" else tr.format_percent(x, "0.0%")


def _decimal(x: float, tr: Translator) -> str:
    return f"{x:.3f}" if tr.code == "en" else tr.format_decimal(x, "0.000")


def audit_headline(checks, tr: Translator = ENGLISH) -> str:
    """Passes, failures and checks that did not apply, each counted on its own."""
    counts = {
        status: [tr.gettext(c.name) for c in checks if c.status == status] for status in STATUSES
    }
    passed, failed, skipped = (len(counts[s]) for s in STATUSES)
    values = {"passed": passed, "total": len(checks), "failed": failed, "skipped": skipped}
    _ = tr.gettext
    # One failure or several: the verb agrees ("1 fails", "0 fail"). Not ngettext: the
    # catalogues' tests read no plural entries yet.
    if skipped and failed == 1:
        # TRANSLATORS: the audit's headline, in bold (Markdown **), with one failed check.
        head = _("**{passed} of {total} checks pass, {failed} fails, {skipped} not applicable.**")
    elif skipped:
        head = _("**{passed} of {total} checks pass, {failed} fail, {skipped} not applicable.**")
    elif failed == 1:
        head = _("**{passed} of {total} checks pass, {failed} fails.**")
    else:
        head = _("**{passed} of {total} checks pass, {failed} fail.**")
    said = [head.format(**values)]
    if failed:
        said.append(_("Failed: {names}.").format(names=html.escape(", ".join(counts["fail"]))))
    if skipped:
        names = html.escape(", ".join(counts["n/a"]))
        said.append(_("Not applicable here: {names}.").format(names=names))
    said.append(
        _("A clean audit says the arithmetic keeps its promises, not that a route is right.")
    )
    return " ".join(said)


def diagnosis_text(report, tr: Translator = ENGLISH) -> str:
    """The headline names the winner and the cause that carries the decision, strongest first."""
    _ = tr.gettext
    name = html.escape(phrase_text(report.winner_label, tr))
    said = [
        _("**{name} holds {share} of the weight.**").format(
            name=name, share=_percent(report.max_weight, tr)
        )
    ]
    implicated = [f for f in report.ranked if f.implicated]
    if not implicated:
        said += [_("None of the tests below moves that weight by much."), _handover(report, tr)]
    elif implicated[0].decides:
        said.append(
            _(
                "**{cause} carries the decision:** undoing it hands the route to another key."
            ).format(cause=_cause(implicated[0], tr))
        )
    else:
        first = implicated[0]
        said.append(
            _(
                "**{cause} has the largest effect:** {name}'s weight goes {before} -> {after}."
            ).format(
                cause=_cause(first, tr),
                name=name,
                before=_decimal(first.before, tr),
                after=_decimal(first.after, tr),
            )
        )
        said.append(_handover(report, tr))
    lines = [
        " ".join(said),
        _("Each row changes one thing and measures the top weight again, strongest first."),
    ]
    # A test that hands the route on is worth its line even when the top weight hardly moves.
    lines += [
        f"- {_shown(f.note, tr)}" for f in report.ranked if f.note and (f.implicated or f.decides)
    ]
    untested = [f for f in report.findings if not f.tested]
    if untested:
        lines.append(_("Not tested, because the change would do nothing here:"))
        lines += [f"- {_shown(f.note, tr)}" for f in untested]
    return "\n\n".join(lines)


def _shown(text: str, tr: Translator) -> str:
    """An engine's sentence (a `Phrase`) in the page's language, escaped for Markdown's HTML."""
    return html.escape(phrase_text(text, tr))


def _cause(finding, tr: Translator = ENGLISH) -> str:
    short = CAUSE_SHORT.get(finding.cause)
    return html.escape(tr.gettext(short) if short else finding.cause)


def _handover(report, tr: Translator = ENGLISH) -> str:
    """Whether any test hands the route to another key: said as the tests found it."""
    _ = tr.gettext
    deciders = [f for f in report.ranked if f.decides and not f.implicated]
    if not deciders:
        return _("No test hands this query's route to another key.")
    # TRANSLATORS: joins the names of two or more tests or causes ("A and B").
    both = _(" and ")
    tests = both.join(_("“{test}”").format(test=_shown(f.perturbation, tr)) for f in deciders)
    causes = both.join(_cause(f, tr) for f in deciders)
    return _(
        "The test {tests} hands the route to another key, about as sharply: {causes} picks "
        "which key wins, not how sharp the route is."
    ).format(tests=tests, causes=causes)


def _run_safely(what: str, fn, tr: Translator = ENGLISH):
    """Run an analysis; a failure becomes a message, never a traceback in the page."""
    try:
        return fn(), ""
    except Exception as exc:  # noqa: BLE001 - the page shows the reason instead
        # TRANSLATORS: {what}: "The audit" or "The diagnosis"; {error}: the error's name and text.
        return None, tr.gettext("{what} could not run: {error}").format(
            what=what, error=f"{type(exc).__name__}: {exc}"
        )


class AuditView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab the audit checks")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr, _ = tr, tr.gettext
        self.button = pn.widgets.Button(label=_("Run the audit"), color="primary")
        self.button.on_click(self.run)
        self.result = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.columns = [_("check"), _("result"), _("error"), _("detail")]
        self.table = pn.pane.DataFrame(
            pd.DataFrame(columns=self.columns),
            index=False,
            sizing_mode="stretch_width",
            visible=False,
            stylesheets=[TABLE_CSS],
        )

    def run(self, _event=None) -> None:
        _ = self.tr.gettext
        checks, problem = _run_safely(_("The audit"), self.state.run_audit, self.tr)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        rows = [
            (
                _(c.name),
                _(STATUS_NAMES.get(c.status, c.status)),
                phrase_text(Phrase("{error}", {"error": Scientific(c.error)}), self.tr)
                if c.applicable
                else "",
                phrase_text(c.detail, self.tr),
            )
            for c in checks
        ]
        self.table.object = pd.DataFrame(rows, columns=self.columns)
        self.table.visible = True
        self.result.object = audit_headline(checks, self.tr)

    def __panel__(self):
        _ = self.tr.gettext
        return pn.Column(
            pn.pane.Markdown(
                _(
                    "Checks the current configuration against the rules attention must keep: "
                    "weights sum to one, masked keys get nothing, swapping values leaves the "
                    "route alone, shifting every logit changes nothing, and the kernels agree."
                ),
                sizing_mode="stretch_width",
            ),
            self.button,
            self.result,
            self.table,
            sizing_mode="stretch_width",
        )


class DiagnosisView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab it explains")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr, _ = tr, tr.gettext
        self.button = pn.widgets.Button(label=_("Why is it sharp?"), color="primary")
        self.button.on_click(self.run)
        self.result = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.columns = [_("cause"), _("test"), _("before"), _("after"), _("implicated")]
        self.table = pn.pane.DataFrame(
            pd.DataFrame(columns=self.columns),
            index=False,
            sizing_mode="stretch_width",
            visible=False,
            stylesheets=[TABLE_CSS],
        )

    def run(self, _event=None) -> None:
        _, tr = self.tr.gettext, self.tr
        report, problem = _run_safely(_("The diagnosis"), self.state.diagnose, tr)
        if problem:
            self.result.object = html.escape(problem)
            self.table.visible = False
            return
        rows = [
            (
                _(CAUSE_NAMES[f.cause]) if f.cause in CAUSE_NAMES else f.cause,
                phrase_text(f.perturbation, tr),
                _decimal(f.before, tr),
                _decimal(f.after, tr),
                _implicated(f, tr),
            )
            for f in report.ranked
        ]
        self.table.object = pd.DataFrame(rows, columns=self.columns)
        self.table.visible = bool(rows)
        self.result.object = diagnosis_text(report, tr)

    def __panel__(self):
        _ = self.tr.gettext
        return pn.Column(
            pn.pane.Markdown(
                _(
                    "A sharp route has four usual suspects. Each is tested by one perturbation: "
                    "normalise the vectors, rotate only the query, undo the dimension growth, "
                    "raise the temperature."
                ),
                sizing_mode="stretch_width",
            ),
            self.button,
            self.result,
            self.table,
            sizing_mode="stretch_width",
        )


def _implicated(finding, tr: Translator) -> str:
    """The table's last column: is the cause implicated, and does it decide the winner."""
    _ = tr.gettext
    if finding.implicated:
        return _("yes, decides the winner") if finding.decides else _("yes")
    return _("no, but decides the winner") if finding.decides else _("no")
