"use strict";
// The accessible names' walk (app/js/control_names.js) runs at render and then only when the
// page changes, on a small stand-in for the page's shadow roots, timers and MutationObserver.
// Run by tests/js/test_browser_scripts.py, or by hand: node --test tests/js/
// LAB_SCRIPTS_DIR names another folder to read the script from (the pytest test feeds broken
// copies and expects these tests to fail).

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");

const SCRIPTS = process.env.LAB_SCRIPTS_DIR || path.resolve(__dirname, "..", "..", "app", "js");
const BODY = fs.readFileSync(path.join(SCRIPTS, "control_names.js"), "utf8");

// A selector of the few shapes the script uses: `*`, `tag`, `.class`, `tag.class`,
// `tag[type=x]`, `tag.class[type=x]`, and lists of them.
function matches(el, selector) {
  return selector.split(",").some((one) => {
    const m = /^\s*(\*|[a-z]*)((?:\.[\w-]+)*)(?:\[(\w+)=(\w+)\])?\s*$/i.exec(one);
    if (!m) throw new Error(`the stand-in cannot match ${one}`);
    const [, tag, classes, attr, value] = m;
    if (tag && tag !== "*" && el.tagName !== tag.toUpperCase()) return false;
    if (classes && classes.split(".").slice(1).some((c) => !el.classes.includes(c))) return false;
    return !attr || el.attrs[attr] === value;
  });
}

class Node {
  constructor(tag, {cls = [], attrs = {}, text = "", children = []} = {}) {
    Object.assign(this, {tagName: tag, classes: cls, attrs: {...attrs}, text, children: []});
    this.shadowRoot = null;
    this.parentNode = null;
    this.dataset = {};
    this.tabIndex = 0;
    this.queries = 0;  // how often the walk went through this node's descendants
    children.forEach((c) => this.append(c));
  }
  append(child) {
    child.parentNode = this;
    this.children.push(child);
    return child;
  }
  get textContent() { return this.text + this.children.map((c) => c.textContent).join(""); }
  get classList() { return {contains: (c) => this.classes.includes(c)}; }
  get previousElementSibling() {
    const siblings = this.parentNode ? this.parentNode.children : [];
    return siblings[siblings.indexOf(this) - 1] || null;
  }
  getAttribute(name) { return name in this.attrs ? this.attrs[name] : null; }
  setAttribute(name, value) { this.attrs[name] = String(value); }
  removeAttribute(name) { delete this.attrs[name]; }
  matches(selector) { return matches(this, selector); }
  descendants() { return this.children.flatMap((c) => [c, ...c.descendants()]); }
  querySelectorAll(selector) {
    if (selector === "*") this.queries += 1;
    return this.descendants().filter((el) => el.matches(selector));
  }
  querySelector(selector) { return this.querySelectorAll(selector)[0] || null; }
  attachShadow() {
    this.shadowRoot = new Node("#shadow");
    this.shadowRoot.host = this;
    return this.shadowRoot;
  }
}

// A checkbox beside its label, as Bokeh draws one, in a component's shadow root.
function checkbox(label) {
  const host = new Node("DIV");
  const input = new Node("INPUT", {attrs: {type: "checkbox"}});
  host.attachShadow().append(new Node("LABEL", {children: [input, new Node("SPAN", {text: label})]}));
  return {host, input};
}

// A page: its document, its clock and timers, and every MutationObserver the script makes.
function page() {
  const document = new Node("#document");
  const clock = {now: 0, timers: new Map(), next: 1, intervals: 0};
  const observers = [];
  class MutationObserver {
    constructor(callback) {
      this.callback = callback;
      this.roots = [];
      observers.push(this);
    }
    observe(root, options) {
      assert.ok(options.childList && options.subtree, "a change anywhere below the root");
      assert.ok(!options.attributes, "the walk sets attributes: watching them would loop");
      this.roots.push(root);
    }
  }
  const globals = {
    document,
    window: {},
    MutationObserver,
    Bokeh: {documents: [], index: {roots: []}},
    Date: {now: () => clock.now},
    setTimeout: (fn, ms) => { clock.timers.set(clock.next, {fn, at: clock.now + ms}); return clock.next++; },
    clearTimeout: (id) => { clock.timers.delete(id); },
    setInterval: () => { clock.intervals += 1; return 0; },
  };
  const render = () => new Function(...Object.keys(globals), "data", "model", "state", "view", "self", "a11y",
    BODY)(...Object.values(globals), {}, {}, {}, {}, {}, {});
  // `ms` pass; the timers due run in order.
  const wait = (ms) => {
    const end = clock.now + ms;
    for (;;) {
      const due = [...clock.timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      clock.timers.delete(due[0]);
      clock.now = due[1].at;
      due[1].fn();
    }
    clock.now = end;
  };
  // A change under `root`, as the browser reports it to the observers that watch it.
  const change = (root) => {
    for (const o of observers) if (o.roots.includes(root)) o.callback([{type: "childList", target: root}], o);
  };
  return {document, clock, observers, render, wait, change, Bokeh: globals.Bokeh};
}

test("the walk names the controls at render and sets no interval", () => {
  const p = page();
  const box = checkbox("A: takes part");
  p.document.append(box.host);
  p.render();
  assert.equal(box.input.getAttribute("aria-label"), "A: takes part");
  assert.equal(p.clock.intervals, 0, "no walk on a timer");
  assert.equal(p.observers.length, 1);
  assert.deepEqual(p.observers[0].roots, [p.document, box.host.shadowRoot]);
  p.wait(60_000);
  assert.equal(p.document.queries, 1, "nothing changed: the walk did not run again");
});

test("a change runs the walk again once the page is quiet, and names what it added", () => {
  const p = page();
  p.render();
  p.wait(5000);
  const box = checkbox("B: takes part");
  p.document.append(box.host);
  p.change(p.document);
  p.change(p.document);
  p.change(p.document);
  assert.equal(box.input.getAttribute("aria-label"), null, "not at once");
  p.wait(199);
  assert.equal(p.document.queries, 1);
  p.wait(1);
  assert.equal(p.document.queries, 2, "one walk for the three changes");
  assert.equal(box.input.getAttribute("aria-label"), "B: takes part");
  // The new component's shadow root is watched now: a change inside it runs the walk too.
  assert.ok(p.observers[0].roots.includes(box.host.shadowRoot));
  box.host.shadowRoot.children[0].children[1].text = "B: left out";
  p.change(box.host.shadowRoot);
  p.wait(1000);
  assert.equal(box.input.getAttribute("aria-label"), "B: left out");
});

test("changes that keep coming still get a walk, at most one a second", () => {
  const p = page();
  p.render();
  p.wait(5000);
  for (let t = 0; t < 40; t++) {  // a change every 100 ms for 4 s
    p.change(p.document);
    p.wait(100);
  }
  const walks = p.document.queries - 1;
  assert.ok(walks >= 3 && walks <= 4, `${walks} walks in 4 s`);
});

test("rendering again adds no second observer", () => {
  const p = page();
  p.render();
  p.render();
  assert.equal(p.observers.length, 1);
  assert.equal(p.document.queries, 2, "each render walks once");
  assert.equal(p.observers[0].roots.filter((r) => r === p.document).length, 1);
});

test("a radio group is named after the question in its tags", () => {
  const p = page();
  const host = new Node("DIV");
  const group = host.attachShadow().append(new Node("DIV", {cls: ["bk-input-group"]}));
  const model = {tags: [new Map([["lab_group_name", "Predict: which key wins?"]])]};
  const view = {el: host, shadow_el: host.shadowRoot};
  p.Bokeh.documents.push({all_models: new Set([model, {tags: []}])});
  p.Bokeh.index.roots.push({owner: {find_one: (m) => (m === model ? view : null)}});
  p.document.append(host);
  p.render();
  assert.equal(group.getAttribute("role"), "radiogroup");
  assert.equal(group.getAttribute("aria-label"), "Predict: which key wins?");
});

test("a multi-choice box and its search input are named after its title, not its placeholder", () => {
  const p = page();
  const host = new Node("DIV");
  const input = new Node("INPUT", {cls: ["choices__input", "choices__input--cloned"],
    attrs: {type: "search", "aria-label": "null"}});
  host.attachShadow().append(new Node("LABEL", {text: "Ablate heads (zero their output)"}));
  const box = new Node("DIV", {cls: ["choices"], attrs: {role: "combobox"}, children: [input]});
  host.shadowRoot.append(box);
  p.document.append(host);
  p.render();
  assert.equal(input.getAttribute("aria-label"), "Ablate heads (zero their output)");
  assert.equal(box.getAttribute("aria-label"), "Ablate heads (zero their output)");
});

test("an open multi-choice list is no Tab stop, and its combobox names the list it controls", () => {
  const p = page();
  const host = new Node("DIV");
  const input = new Node("INPUT", {cls: ["choices__input", "choices__input--cloned"], attrs: {type: "search"}});
  host.attachShadow().append(new Node("LABEL", {text: "Hide positions from this head"}));
  const list = new Node("DIV", {attrs: {role: "listbox"}});
  const dropdown = new Node("DIV", {children: [list]});
  const outer = new Node("DIV", {children: [input, dropdown]});
  host.shadowRoot.append(outer);
  const shown = [];
  const inst = {
    containerOuter: {element: outer},
    dropdown: {element: dropdown, show() { this.element.setAttribute("aria-expanded", "true"); shown.push(1); return this; },
      hide() { this.element.setAttribute("aria-expanded", "false"); return this; }},
  };
  const view = {el: host, choice_el: inst};
  p.Bokeh.index.roots.push({owner: {query_one: (test) => (test(view) ? view : null)}});
  p.document.append(host);
  p.render();
  assert.equal(list.tabIndex, -1);
  assert.ok(list.id);
  assert.equal(outer.getAttribute("aria-controls"), list.id);
  inst.dropdown.show();
  assert.equal(shown.length, 1, "Choices' own show still runs");
  assert.equal(dropdown.getAttribute("aria-expanded"), null, "the combobox carries it, not the list");
});

test("a chosen chip drops the aria-selected a div without a role may not carry", () => {
  const p = page();
  const host = new Node("DIV");
  const chip = new Node("DIV", {cls: ["choices__item"], attrs: {"aria-selected": "true"}, text: "layer 1 head 5"});
  const option = new Node("DIV", {cls: ["choices__item"], attrs: {role: "option", "aria-selected": "false"}});
  host.attachShadow().append(new Node("DIV", {children: [chip, option]}));
  p.document.append(host);
  p.render();
  assert.equal(chip.getAttribute("aria-selected"), null);
  assert.equal(option.getAttribute("aria-selected"), "false", "an option keeps its state");
});
