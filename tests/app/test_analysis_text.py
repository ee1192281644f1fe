"""The audit and diagnosis panels say exactly what was measured: counts kept apart, keys by
label, the deciding cause first, and no row for a test that changes nothing."""

import re

import numpy as np

from app.state.lab_state import LabState
from app.views.analysis import AuditView, DiagnosisView, audit_headline, diagnosis_text
from engine.audit import Check
from engine.snapshot import describe


def test_audit_counts_passes_failures_and_not_applicable_apart():
    checks = [
        Check("a", True, 0.0, ""),
        Check("b", True, 0.0, ""),
        Check("c", False, 1.0, ""),
        Check("masked keys get exactly 0", True, 0.0, "", applicable=False),
    ]
    text = audit_headline(checks)
    assert text.startswith("**2 of 4 checks pass, 1 fails, 1 not applicable.**")
    assert "Failed: c." in text and "Not applicable here: masked keys get exactly 0." in text
    clean = audit_headline(checks[:2])
    assert clean.startswith("**2 of 2 checks pass, 0 fail.**") and "applicable" not in clean


def test_audit_panel_on_a_lab_without_a_mask_does_not_claim_every_check_passed():
    view = AuditView(LabState())  # no key is masked, so one check cannot apply
    view.run()
    text = view.result.object
    n = len(view.table.object)
    assert f"{n} of {n} checks pass" not in text
    assert re.search(r"\d+ of \d+ checks pass, 0 fail, \d+ not applicable", text)
    rows = view.table.object.to_dict("records")
    assert {r["result"] for r in rows} <= {"pass", "fail", "n/a"}
    assert all(r["error"] == "" for r in rows if r["result"] == "n/a")


def test_diagnosis_on_the_sharp_scenario_puts_the_deciding_cause_first():
    state = LabState(scenario="sharp")
    view = DiagnosisView(state)
    view.run()
    rows = view.table.object.to_dict("records")
    assert rows[0]["cause"].startswith("Key norm") and rows[0]["implicated"].startswith("yes, dec")
    assert not any("d_k 2 -> 2" in r["test"] for r in rows)  # a test that changes nothing
    assert len(rows) == 3
    text = view.result.object
    assert "**long key holds 97.9% of the weight.**" in text
    assert "**Key norm carries the decision:**" in text
    assert "from long key to aligned" in text
    assert not re.search(r"\bkey \d\b", text)
    assert "no hidden dimensions" in text  # said once, as the reason it was not tested


def test_diagnosis_without_a_deciding_cause_names_the_largest_effect():
    text = diagnosis_text(LabState().diagnose())
    assert text.startswith("**A holds 42.4% of the weight.** **Alignment has the largest effect:**")
    assert "A's weight goes 0.424 -> 0.325" in text
    assert "normalising changes nothing" in text


def test_the_summary_never_says_minus_zero():
    one_hot = {
        "weights": np.array([1.0, 0.0]),
        "contribution_norms": np.array([2.0, 0.0]),
        "labels": ("A", "B"),
        "entropy": -1e-17,  # what rounding leaves of a one-hot route's entropy
        "effective_keys": 1.0,
        "legal": np.array([True, True]),
        "null_weight": None,
    }
    text = describe(one_hot)
    assert "entropy 0.00 nats" in text and "-0.00" not in text


def test_lesson_numbers_never_show_minus_zero():
    from app.i18n.translator import Translator
    from app.lessons.numbers import fixed

    def shown(x, digits=2, tr=None):
        return fixed(x, digits).text(tr or Translator("en"))

    assert shown(-1e-17) == "0.00" and shown(-0.004) == "0.00" and shown(-0.006) == "-0.01"
    assert shown(-1e-9, 0) == "0"
    assert shown(-0.004, tr=Translator("es")) == "0,00"  # nor in another language


def test_a_zero_share_is_never_minus_zero_percent():
    from engine.snapshot import share_percent

    assert (
        share_percent(-0.0) == "0%" and share_percent(-1e-19) == "0%" and share_percent(0.0) == "0%"
    )


def test_diagnosis_says_which_test_hands_the_route_on_even_when_the_weight_holds():
    # At temperature 0.05 normalising keeps the top weight at 0.99 but gives it to another key:
    # the headline once said no test did that, beside the key-norm row that did.
    state = LabState(scenario="sharp")
    state.temperature = 0.05
    report = state.diagnose()
    norm = next(f for f in report.ranked if f.cause == "key_norm")
    assert norm.decides and not norm.implicated  # the engine's result the text must match
    view = DiagnosisView(state)
    view.run()
    text = view.result.object
    assert "No test hands" not in text and "no test hands" not in text
    assert "The test “normalise q and k to unit length” hands the route to another key" in text
    assert "Key norm picks which key wins, not how sharp the route is" in text
    assert "length picks which key wins" in norm.note
    assert "from long key to aligned" in text  # its note is listed
    rows = {r["cause"].split(" (")[0]: r for r in view.table.object.to_dict("records")}
    assert rows["Key norm"]["implicated"] == "no, but decides the winner"
    # Where no test hands the route on, the text says so.
    assert "No test hands this query's route to another key." in diagnosis_text(
        LabState().diagnose()
    )
