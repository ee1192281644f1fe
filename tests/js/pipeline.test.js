"use strict";
// The live drag preview's arithmetic (app/js/pipeline.js) against the NumPy engine, on the
// fixtures tests/js/pipeline_fixtures.py writes from the server's own code. Run by
// tests/js/test_browser_scripts.py; by hand:
//   python3 tests/js/pipeline_fixtures.py /tmp/fixtures.json
//   LAB_PIPELINE_FIXTURES=/tmp/fixtures.json node --test tests/js/
// LAB_PIPELINE_SOURCE names another pipeline file to test (the pytest test feeds broken copies
// and expects these tests to fail).

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");
const vm = require("node:vm");

const ROOT = path.resolve(__dirname, "..", "..");
const SOURCE = process.env.LAB_PIPELINE_SOURCE || path.join(ROOT, "app", "js", "pipeline.js");
const FIXTURES = process.env.LAB_PIPELINE_FIXTURES;
const TOLERANCE = 1e-9;  // absolute, on every number

// The file as Bokeh runs a CustomJS body: in strict mode, inside a function.
function loadPipeline(file) {
  const code = fs.readFileSync(file, "utf8");
  const wrapped = `(function () {\n'use strict';\n${code}\nreturn previewPipeline;\n})()`;
  return vm.runInThisContext(wrapped, {filename: file, lineOffset: -2})();
}

function loadFixtures() {
  assert.ok(
    FIXTURES,
    "LAB_PIPELINE_FIXTURES is not set: write the fixtures with " +
      "`python3 tests/js/pipeline_fixtures.py OUT.json` and point it there " +
      "(or run tests/js/test_browser_scripts.py with pytest)",
  );
  return JSON.parse(fs.readFileSync(FIXTURES, "utf8"));
}

// Largest |JS - engine| seen per quantity, and the first disagreements.
class Comparison {
  constructor() {
    this.worst = {};
    this.failures = [];
    this.numbers = 0;
  }
  fail(where, message) {
    if (this.failures.length < 12) this.failures.push(`${where}: ${message}`);
  }
  // One number; `want` null stands for the engine's -inf (a masked candidate's logit).
  number(where, name, got, want) {
    this.numbers += 1;
    if (want === null) {
      if (got !== -Infinity) this.fail(where, `${name} is ${got}, the engine has -inf`);
      return;
    }
    const diff = Math.abs(got - want);
    if (!(diff <= TOLERANCE)) {
      this.fail(where, `${name} ${got} differs from the engine's ${want} by ${diff}`);
    }
    if (Number.isFinite(diff) && !(diff <= (this.worst[name] ?? -1))) this.worst[name] = diff;
  }
  array(where, name, got, want) {
    if (got == null || got.length !== want.length) {
      this.fail(where, `${name} has ${got == null ? "no" : got.length} entries, the engine ${want.length}`);
      return;
    }
    for (let i = 0; i < want.length; i++) this.number(where, `${name}`, got[i], want[i]);
  }
  max() {
    return Math.max(0, ...Object.values(this.worst));
  }
  report(t, what) {
    const fields = Object.entries(this.worst).sort((a, b) => b[1] - a[1])
      .map(([name, diff]) => `${name} ${diff.toExponential(2)}`).join(", ");
    t.diagnostic(`${what}: ${this.numbers} numbers, max |JS - engine| ${this.max().toExponential(3)} (${fields})`);
    assert.deepEqual(this.failures, [], `the preview differs from the engine:\n${this.failures.join("\n")}`);
  }
}

const ROUTE = [
  "query", "keys_x", "keys_y", "values_x", "values_y", "visible", "scores", "scaled",
  "logits", "weights", "contributions_x", "contributions_y", "output",
];

const fixtures = FIXTURES ? loadFixtures() : null;
const pipeline = loadPipeline(SOURCE);

// Every move of every case, with the route the pipeline computes for it.
function* moves() {
  for (const [c, item] of fixtures.cases.entries()) {
    for (const [k, step] of item.moves.entries()) {
      const where = `case ${c} move ${k} (${JSON.stringify(step.move)}, settings ${JSON.stringify(item.settings)})`;
      yield {item, step, where, route: pipeline.compute(item.P, item.R, step.move)};
    }
  }
}

test("the fixtures are there", () => {
  loadFixtures();
});

test("the fixtures cover every setting the preview reads, both ways", {skip: !fixtures}, () => {
  const seen = new Set();
  for (const {settings, moves: steps} of fixtures.cases) {
    for (const name of ["scale", "normalise", "causal", "null_route"]) seen.add(`${name}=${settings[name]}`);
    seen.add(`d_k ${settings.d_k > 2 ? "over" : "at"} 2`);
    seen.add(`distractors ${settings.distractors > 0 ? "some" : "none"}`);
    seen.add(`temperature ${settings.temperature > 1 ? "over" : "under"} 1`);
    if (settings.mask.some((on) => !on)) seen.add("a key masked");
    for (const {move, expect} of steps) seen.add(`${move.kind} ${expect === null ? "refused" : "moved"}`);
  }
  const wanted = [];
  for (const name of ["scale", "normalise", "causal", "null_route"]) wanted.push(`${name}=true`, `${name}=false`);
  wanted.push("d_k over 2", "d_k at 2", "distractors some", "distractors none", "temperature over 1",
    "temperature under 1", "a key masked", "key moved", "value moved", "query moved", "key refused",
    "value refused");
  assert.deepEqual(wanted.filter((w) => !seen.has(w)), []);
});

test("the route of each move agrees with the engine's", {skip: !fixtures}, (t) => {
  const check = new Comparison();
  let compared = 0;
  for (const {step, where, route} of moves()) {
    if (step.expect === null) continue;
    if (route === null) { check.fail(where, "the preview refused a move the server took"); continue; }
    const want = step.expect;
    for (const name of ROUTE) check.array(where, name, route[name], want[name]);
    for (const name of ["angle", "entropy", "effective_keys"]) check.number(where, name, route[name], want[name]);
    if (want.null_weight === null) {
      if (route.null_weight !== null) check.fail(where, `null_weight ${route.null_weight} without a null route`);
    } else {
      check.number(where, "null_weight", route.null_weight, want.null_weight);
    }
    compared += 1;
  }
  assert.ok(compared > 0);
  check.report(t, `${compared} moves`);
});

test("a move the server refuses previews nothing", {skip: !fixtures}, () => {
  const wrong = [];
  for (const {step, where, route} of moves()) {
    if (step.expect === null && route !== null) wrong.push(where);
  }
  assert.deepEqual(wrong, []);
});

test("the entropy curve over temperature agrees with the engine's", {skip: !fixtures}, (t) => {
  const check = new Comparison();
  for (const {item, step, where, route} of moves()) {
    if (step.expect === null || route === null) continue;
    const curve = pipeline.entropySweep(item.P, route, fixtures.sweep_temperatures);
    check.array(where, "sweep_entropy", curve, step.expect.sweep_entropy);
  }
  check.report(t, "entropy curves");
});

test("each contribution's length and share agree with the engine's", {skip: !fixtures}, (t) => {
  const check = new Comparison();
  for (const {step, where, route} of moves()) {
    if (step.expect === null || route === null) continue;
    const {norms, shares} = pipeline.contributionShares(route);
    check.array(where, "norms", norms, step.expect.norms);
    check.array(where, "shares", shares, step.expect.shares);
  }
  check.report(t, "contribution shares");
});

test("the percentage notes read as the server writes them", {skip: !fixtures}, () => {
  const wrong = [];
  let compared = 0;
  for (const {step, where} of moves()) {
    for (const [x, note] of step.expect?.notes ?? []) {
      compared += 1;
      if (pipeline.pct(x) !== note) wrong.push(`${where}: pct(${x}) is ${pipeline.pct(x)}, the server writes ${note}`);
    }
  }
  assert.ok(compared > 0);
  assert.deepEqual(wrong.slice(0, 12), []);
});
