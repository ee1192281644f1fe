"use strict";
// The teaching tabs' keys and roles (app/js/tab_keys.js) on a stand-in Tabs view: which tab each
// key opens, the roles and selected state, one Tab stop, and a key that opens and focuses a
// tab. Run by tests/js/test_browser_scripts.py, or by hand: node --test tests/js/

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");

const DIR = process.env.LAB_SCRIPTS_DIR || path.resolve(__dirname, "..", "..", "app", "js");
const BODY = fs.readFileSync(path.join(DIR, "tab_keys.js"), "utf8");

function element(text = "") {
  const attrs = new Map();
  const listeners = {};
  return {
    textContent: text, tabIndex: 0, parentNode: null, attrs, listeners, focused: false,
    getAttribute: (k) => (attrs.has(k) ? attrs.get(k) : null),
    setAttribute: (k, v) => attrs.set(k, String(v)),
    addEventListener: (type, fn) => { listeners[type] = fn; },
    focus() { this.focused = true; },
  };
}

// A Tabs view with `names` headers, found by its CSS class, and the component's state.
function render(names, {late = false} = {}) {
  const row = element();
  const tabs = names.map((name) => Object.assign(element(name), {parentNode: row}));
  const model = {id: "p7", css_classes: ["lab-teaching"], active: 0};
  const view = {
    model, header_els: tabs, el: element(), shadow_el: element(),
    child_views: names.map(() => ({el: element()})),
    change_active(i) { model.active = i; },
  };
  const idle = [];
  const models = new Set(late ? [{css_classes: []}] : [{css_classes: []}, model]);
  const Bokeh = {
    documents: [{all_models: models, idle: {connect: (slot) => idle.push(slot)}}],
    index: {roots: [{owner: {find_one: (m) => (m === model ? view : null)}}]},
  };
  class MutationObserver { observe() {} }
  const state = {};
  new Function("Bokeh", "MutationObserver", "setTimeout", "data", "state", BODY)(
    Bokeh, MutationObserver, () => 0, {css_class: "lab-teaching", label: "Teaching"}, state);
  const key = (name, on) => {
    let prevented = false;
    view.el.listeners.keydown({key: name, composedPath: () => [on], preventDefault: () => { prevented = true; }});
    return prevented;
  };
  const drawn = () => { models.add(model); idle.forEach((slot) => slot()); };
  return {state, view, tabs, row, key, drawn};
}

test("the arrows wrap, Home and End go to the ends, Enter and Space open the focused tab", () => {
  const {keyTarget} = render(["A"]).state;
  assert.equal(keyTarget("ArrowRight", 3, 4), 0);
  assert.equal(keyTarget("ArrowLeft", 0, 4), 3);
  assert.equal(keyTarget("ArrowRight", 1, 4), 2);
  assert.equal(keyTarget("Home", 2, 4), 0);
  assert.equal(keyTarget("End", 0, 4), 3);
  assert.equal(keyTarget("Enter", 2, 4), 2);
  assert.equal(keyTarget(" ", 1, 4), 1);
  assert.equal(keyTarget("Tab", 1, 4), null);
  assert.equal(keyTarget("ArrowDown", 1, 4), null);
});

test("the headers are a named tab list, the open tab the one Tab stop, panels labelled", () => {
  const {tabs, row, view} = render(["Lessons", "Audit", "Share"]);
  assert.equal(row.getAttribute("role"), "tablist");
  assert.equal(row.getAttribute("aria-label"), "Teaching");
  assert.deepEqual(tabs.map((t) => t.getAttribute("role")), ["tab", "tab", "tab"]);
  assert.deepEqual(tabs.map((t) => t.getAttribute("aria-selected")), ["true", "false", "false"]);
  assert.deepEqual(tabs.map((t) => t.tabIndex), [0, -1, -1]);
  const panel = view.child_views[1].el;
  assert.equal(panel.getAttribute("role"), "tabpanel");
  assert.equal(panel.getAttribute("aria-labelledby"), tabs[1].getAttribute("id"));
  assert.equal(tabs[1].getAttribute("aria-controls"), panel.getAttribute("id"));
});

test("a key opens a tab, moves focus to it and updates the selected state", () => {
  const {tabs, view, key} = render(["Lessons", "Audit", "Share"]);
  assert.ok(key("ArrowLeft", tabs[0]));
  assert.equal(view.model.active, 2);
  assert.ok(tabs[2].focused);
  assert.deepEqual(tabs.map((t) => t.getAttribute("aria-selected")), ["false", "false", "true"]);
  assert.deepEqual(tabs.map((t) => t.tabIndex), [-1, -1, 0]);
  view.model.active = 0;  // focus on a closed tab (a screen reader's cursor): Space opens it
  assert.ok(key(" ", tabs[1]));
  assert.equal(view.model.active, 1);
  assert.ok(!key("a", tabs[1]), "other keys are left alone");
  assert.ok(!key("ArrowRight", view.el), "keys outside the headers are left alone");
  assert.equal(view.model.active, 1);
});

test("tabs drawn after the retries are found when the document reports every root drawn", () => {
  const {row, drawn} = render(["Lessons", "Audit"], {late: true});
  assert.equal(row.getAttribute("role"), null);
  drawn();
  assert.equal(row.getAttribute("role"), "tablist");
});
