"use strict";
// The planes' tips by keyboard (app/js/tip_keys.js), on a stand-in for the component's row:
// each press sends the sum of the steps taken on its tip (so presses sent as one change are
// not lost), Shift takes five steps, every arrow turns the query, other keys pass, and the
// tips are drawn in place (a moving tip keeps its element, and so its focus). Run by
// tests/js/test_browser_scripts.py, or by hand: node --test tests/js/

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");

const FILE = path.resolve(__dirname, "..", "..", "app", "js", "tip_keys.js");
const TEXT = fs.readFileSync(
  process.env.LAB_SCRIPTS_DIR ? path.join(process.env.LAB_SCRIPTS_DIR, "tip_keys.js") : FILE,
  "utf8",
);

function section(name) {
  return TEXT.split(new RegExp(`^// @script ${name}$`, "m"))[1].split(/^\/\/ @script /m)[0];
}

// A stand-in element with what the script uses of one.
function element(tag) {
  const node = {
    tagName: tag, children: [], dataset: {}, attributes: {}, listeners: {}, className: "",
    tabIndex: -1, _text: "",
    setAttribute(k, v) { this.attributes[k] = String(v); },
    getAttribute(k) { return this.attributes[k] ?? null; },
    appendChild(c) { this.children.push(c); c.parentNode = this; return c; },
    addEventListener(type, fn) { this.listeners[type] = fn; },
    querySelectorAll(sel) { return sel === "[data-tip]" ? this.children.filter((c) => c.dataset.tip) : []; },
    closest(sel) { return sel === "[data-tip]" && this.dataset.tip ? this : null; },
  };
  Object.defineProperty(node, "textContent", {
    get() { return this._text; },
    set(v) { this._text = v; if (v === "") this.children = []; },
  });
  return node;
}

function component(tips) {
  const row = element("DIV");
  const help = element("P");
  help.id = "help-1";
  const data = {encoded_tips: encodeURIComponent(JSON.stringify(tips)), move: ""};
  const state = {};
  const document = {createElement: element};
  const draw = () => new Function("data", "state", "row", "help", "document", section("encoded_tips"))(
    data, state, row, help, document);
  const self = {encoded_tips: draw};
  new Function("data", "state", "row", "help", "self", "document", section("render"))(
    data, state, row, help, self, document);
  const press = (tip, key, shiftKey = false) => {
    let prevented = false;
    row.listeners.keydown({target: tip, key, shiftKey, preventDefault: () => { prevented = true; }});
    return prevented;
  };
  return {row, data, draw, press};
}

const TIPS = [
  {name: "q", kind: "query", index: 0, label: "Query q", now: 0, min: -180, max: 180,
    text: "angle 0 degrees", shown: "q 0°"},
  {name: "k0", kind: "key", index: 0, label: "Key A", now: 1, min: -1000, max: 1000,
    text: "x 1.00, y 0.00", shown: "A (1.00, 0.00)"},
];

test("each tip is a named slider that reads its place", () => {
  const {row} = component(TIPS);
  const [q, a] = row.children;
  assert.equal(a.getAttribute("role"), "slider");
  assert.equal(a.getAttribute("aria-label"), "Key A");
  assert.equal(a.getAttribute("aria-valuetext"), "x 1.00, y 0.00");
  assert.equal(a.getAttribute("aria-describedby"), "help-1");
  assert.equal(q.getAttribute("aria-valuenow"), "0");
  assert.equal(a.tabIndex, 0);
});

test("a press sends the sum of the steps on its tip; Shift takes five", () => {
  const {row, data, press} = component(TIPS);
  const a = row.children[1];
  assert.ok(press(a, "ArrowRight"));
  assert.equal(data.move, "key:0:1:0");
  press(a, "ArrowRight");
  press(a, "ArrowUp", true);
  assert.equal(data.move, "key:0:2:5");  // three presses, one change: nothing lost
  press(a, "ArrowLeft");
  press(a, "ArrowDown");
  assert.equal(data.move, "key:0:1:4");
});

test("every arrow turns the query, and other keys pass", () => {
  const {row, data, press} = component(TIPS);
  const q = row.children[0];
  press(q, "ArrowUp");
  press(q, "ArrowRight", true);
  assert.equal(data.move, "query:0:6:0");
  press(q, "ArrowDown");
  assert.equal(data.move, "query:0:5:0");
  assert.equal(press(q, "Tab"), false);
  assert.equal(data.move, "query:0:5:0");
});

test("new places are drawn on the same elements; a new set of tips is drawn anew", () => {
  const {row, data, draw} = component(TIPS);
  const a = row.children[1];
  const moved = [TIPS[0], {...TIPS[1], now: 1.2, text: "x 1.20, y 0.00", shown: "A (1.20, 0.00)"}];
  data.encoded_tips = encodeURIComponent(JSON.stringify(moved));
  draw();
  assert.equal(row.children[1], a);
  assert.equal(a.getAttribute("aria-valuetext"), "x 1.20, y 0.00");
  assert.equal(a.textContent, "A (1.20, 0.00)");
  data.encoded_tips = encodeURIComponent(JSON.stringify([TIPS[0]]));
  draw();
  assert.equal(row.children.length, 1);
});
