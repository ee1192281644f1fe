"use strict";
// The lesson step's control pointer (app/js/control_pointer.js): which label names a control,
// and which component each name finds, on a small stand-in for the page's shadow roots. Run by
// tests/js/test_browser_scripts.py, or by hand: node --test tests/js/

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");

const FILE = path.resolve(__dirname, "..", "..", "app", "js", "control_pointer.js");

// The "render" section, run as Panel runs it: a function of the component's names.
function render(data = {names: [], nonce: 0}, said = {}) {
  const text = fs.readFileSync(FILE, "utf8");
  const body = text.split(/^\/\/ @script render$/m)[1].split(/^\/\/ @script /m)[0];
  const state = {};
  new Function("data", "state", "said", body)(data, state, said);
  return state;
}

// A stand-in element: a tag, classes, text (its own, or its children's), attributes, children
// and maybe a shadow root.
function el(tag, {cls = [], text = "", children = [], shadow = null, attrs = {}} = {}) {
  const node = {
    tagName: tag, shadowRoot: shadow, children,
    textContent: children.length ? children.map((c) => c.textContent).join("") : text,
    childNodes: children.length ? children : [{textContent: text}],
    getAttribute: (name) => (name in attrs ? attrs[name] : null),
    classList: {contains: (c) => cls.includes(c)},
    getClientRects: () => [1],
  };
  const all = (n) => n.children.flatMap((c) => [c, ...all(c)]);
  node.querySelectorAll = () => all(node);
  for (const child of children) child.getRootNode = () => node;
  return node;
}

test("a label names a control when it is the name, or the name then a note or a value", () => {
  const {labelMatches} = render();
  assert.ok(labelMatches("Query position (causal hides keys after it): 2", "Query position"));
  assert.ok(labelMatches("Temperature τ (log scale): 1.00", "Temperature τ"));
  assert.ok(labelMatches("  Reverse the pairs ", "Reverse the pairs"));
  assert.ok(!labelMatches("Swap values", "Swap the value of"));
  assert.ok(!labelMatches("Causality", "Causal"));
  assert.ok(!labelMatches(null, "Causal"));
});

test("a translated label names its control too, a Chinese note's full-width bracket included", () => {
  const {labelMatches} = render();
  assert.ok(labelMatches("Temperatura τ (escala logarítmica): 1,00", "Temperatura τ"));
  assert.ok(labelMatches("温度 τ（对数刻度）: 1.00", "温度 τ"));
  assert.ok(labelMatches("更多设置：候选键", "更多设置"));
  assert.ok(!labelMatches("温度计", "温度"));
  assert.ok(!labelMatches("Temperatura τ (escala logarítmica)", "Temperature τ"));
});

test("the pointer speaks the page's language where the page gives its words, else English", () => {
  const spanish = {cue: "☰ Abre la barra lateral para {names}"};
  assert.equal(render({names: [], nonce: 0, words: spanish}).words("cue", '"Temperatura τ"'),
    '☰ Abre la barra lateral para "Temperatura τ"');
  assert.equal(render().words("cue", '"Causal"'), '☰ Open the sidebar for "Causal"');
  assert.equal(render({names: [], nonce: 0, words: spanish}).words("highlighted", '"d_k"'),
    'Highlighted in the sidebar, the controls this step uses: "d_k".');
});

test("each name finds the component its label is drawn in, or null", () => {
  const {findControls} = render();
  const sliderRoot = el("#shadow", {children: [el("DIV", {cls: ["bk-slider-title"],
    text: "Query position (causal hides keys after it): 2"})]});
  const slider = el("DIV", {shadow: sliderRoot});
  sliderRoot.host = slider;
  const buttonRoot = el("#shadow", {children: [el("BUTTON", {text: "Reverse the pairs"})]});
  const button = el("DIV", {shadow: buttonRoot});
  buttonRoot.host = button;
  const sidebar = el("DIV", {children: [slider, button]});
  const found = findControls(sidebar, ["Reverse the pairs", "Query position", "Swap values"]);
  assert.deepEqual(found, [button, slider, null]);
});

test("a disclosure button is found by its words, not the arrow it hides from screen readers", () => {
  const {findControls} = render();
  const arrow = el("SPAN", {text: "▸", attrs: {"aria-hidden": "true"}});
  const words = el("SPAN", {text: " More settings: candidates, engine, key/value pairs"});
  const root = el("#shadow", {children: [el("BUTTON", {children: [arrow, words]})]});
  const disclosure = el("DIV", {shadow: root});
  root.host = disclosure;
  const sidebar = el("DIV", {children: [disclosure]});
  assert.deepEqual(findControls(sidebar, ["More settings", "Swap values"]), [disclosure, null]);
});

test("a folded sidebar: its button outlined, the controls named, and pointed at once opened", () => {
  const said = {};
  const data = {names: ["More settings", "Swap values"], nonce: 0};
  const {point} = render(data, said);
  const sidebar = el("DIV", {cls: []});
  const clicks = [];
  const toggle = {style: {cssText: ""}, addEventListener: (kind, f) => clicks.push([kind, f])};
  const timers = [];
  const realTimeout = globalThis.setTimeout;
  globalThis.document = {getElementById: (id) => ({sidebar, "sidebar-toggle": toggle})[id]};
  globalThis.setTimeout = (f) => timers.push(f);
  try {
    data.nonce = 1;
    point();
    assert.match(said.textContent, /open it with the menu button/);
    assert.match(said.textContent, /"More settings", "Swap values"/);
    assert.equal(toggle.style.outline, "4px solid #e69f00");
    assert.equal(clicks.length, 1);
    data.nonce = 2;
    point();  // the next step while still folded: one listener, not one a step
    assert.equal(clicks.length, 1);
  } finally {
    delete globalThis.document;
    globalThis.setTimeout = realTimeout;
  }
});

test("after Measure the shown verdict is scrolled into view, the nearest way", () => {
  const {showVerdict} = render();
  const scrolled = [];
  const result = el("DIV", {cls: ["lab-lesson-result"]});
  result.scrollIntoView = (options) => scrolled.push(options);
  const hidden = el("DIV", {cls: ["lab-lesson-result"]});
  hidden.getClientRects = () => [];  // an old step's pane, not drawn
  hidden.scrollIntoView = () => scrolled.push("hidden");
  const root = el("#shadow", {children: [result]});
  const page = el("DIV", {children: [hidden, el("DIV", {shadow: root})]});
  globalThis.window = {matchMedia: (q) => ({matches: q.includes("reduce")})};
  try {
    assert.equal(showVerdict(page), result);
  } finally {
    delete globalThis.window;
  }
  assert.deepEqual(scrolled, [{block: "nearest", behavior: "auto"}]);  // reduced motion: no glide
  assert.equal(showVerdict(el("DIV")), null);  // no verdict drawn: nothing moves
});
