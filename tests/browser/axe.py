"""axe-core in a Playwright page: the pinned npm copy (package.json, installed by `npm ci` into
node_modules/ at the checkout's root) is injected into the page and run over the whole
document, open shadow roots included (axe walks them itself)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# The impacts the browser tests refuse; run_axe runs the rules of other impacts only if named.
BLOCKING = ("critical", "serious")
RUN_NPM_CI = "node_modules/ is missing axe-core: run `npm ci` in the checkout (package-lock.json)"

# axe 4.x gives every rule one impact, and each of the rule's violations takes it (axe.js's
# _finalizeRuleResult sets every check's impact to the rule's): a rule of a lesser impact can
# only report what the tests pass over, so it is switched off for the run (a quarter of axe's
# time on a lesson page) unless named in `also`. A rule without an impact keeps running.
_RUN = """async ([impacts, also]) => {
  const off = {};
  for (const rule of axe._audit.rules) {
    if (rule.impact && !impacts.includes(rule.impact) && !also.includes(rule.id)) {
      off[rule.id] = {enabled: false};
    }
  }
  const result = await axe.run(document, {resultTypes: ['violations'], rules: off});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: JSON.stringify(n.target), summary: n.failureSummary})),
  }));
}"""


@dataclass(frozen=True)
class Violation:
    rule: str
    impact: str
    help: str
    nodes: tuple[str, ...]  # axe's targets, shadow-root paths as JSON lists

    def describe(self) -> str:
        shown = "\n    ".join(self.nodes[:8])
        more = f"\n    ... and {len(self.nodes) - 8} more" if len(self.nodes) > 8 else ""
        return (
            f"{self.impact} {self.rule} ({self.help}), {len(self.nodes)} nodes:\n    {shown}{more}"
        )


def run_axe(page, also: tuple[str, ...] = ()) -> list[Violation]:
    """Every critical or serious (BLOCKING) axe violation in the page as it is now, and every
    violation of the rules named in `also`, whatever their impact."""
    if not AXE_JS.exists():
        pytest.fail(RUN_NPM_CI)
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    return [
        Violation(
            v["id"], v["impact"] or "minor", v["help"], tuple(n["target"] for n in v["nodes"])
        )
        for v in page.evaluate(_RUN, [list(BLOCKING), list(also)])
    ]
