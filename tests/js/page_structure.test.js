"use strict";
// The page's landmarks (app/js/page_structure.js) on a stand-in for the template's elements:
// one main, a named settings landmark whose wrapper list is no list, a level-one heading and a
// named dialog. Run by tests/js/test_browser_scripts.py, or by hand: node --test tests/js/

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");

const DIR = process.env.LAB_SCRIPTS_DIR || path.resolve(__dirname, "..", "..", "app", "js");

function element() {
  const attrs = new Map();
  return {attrs, setAttribute: (k, v) => attrs.set(k, String(v))};
}

function render(present) {
  const els = Object.fromEntries(present.map((key) => [key, element()]));
  const doc = {
    getElementById: (id) => els[`#${id}`] ?? null,
    querySelector: (selector) => els[selector] ?? null,
  };
  const body = fs.readFileSync(path.join(DIR, "page_structure.js"), "utf8")
    .replace("__SIDEBAR_NAME__", JSON.stringify("Settings"))
    .replace("__DIALOG_NAME__", JSON.stringify("Join the class"));
  new Function("document", body)(doc);
  return Object.fromEntries(Object.entries(els).map(([k, v]) => [k, Object.fromEntries(v.attrs)]));
}

test("the template's page gets its landmarks, heading and dialog name", () => {
  const got = render(["#main", "#sidebar", "#sidebar > ul", "#header .app-header", "#pn-Modal"]);
  assert.deepEqual(got["#main"], {role: "main"});
  assert.deepEqual(got["#sidebar"], {role: "complementary", "aria-label": "Settings"});
  assert.deepEqual(got["#sidebar > ul"], {role: "none"});
  assert.deepEqual(got["#header .app-header"], {role: "heading", "aria-level": "1"});
  assert.deepEqual(got["#pn-Modal"], {"aria-label": "Join the class"});
});

test("a page without a sidebar or a modal still gets its main and heading", () => {
  const got = render(["#main", "#header .app-header"]);
  assert.deepEqual(got["#main"], {role: "main"});
  assert.equal(got["#header .app-header"].role, "heading");
});
