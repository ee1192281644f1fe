"use strict";
// ESLint for the lab's browser scripts (app/js/) and their Node tests (tests/js/); run by
// tests/js/test_browser_scripts.py, or by hand: npm ci && npx eslint app/js tests/js eslint.config.js
//
// Each browser script runs as the body of a function Bokeh or Panel makes (CustomJS,
// CustomJSTickFormatter, ReactiveHTML `_scripts`), so a top-level `return` is allowed, and the
// names that function receives are declared per file below. A sections file holds several such
// bodies, each after a `// @script NAME` line (app/js/__init__.py `sections`): each is linted on
// its own, the way it runs.

const fs = require("node:fs");
const path = require("node:path");
const js = require("@eslint/js");
const globals = require("globals");

const MARKER = /^\/\/ @script (\w+)[ \t]*$/;
const SCRIPTS = path.join(__dirname, "app", "js");

const isSections = (file) => fs.readFileSync(file, "utf8").split("\n").some((line) => MARKER.test(line));
const SECTION_FILES = fs.readdirSync(SCRIPTS)
  .filter((name) => name.endsWith(".js") && isSections(path.join(SCRIPTS, name)))
  .map((name) => `app/js/${name}`);

// Where each section starts in its file, for the messages' line numbers.
const starts = new Map();
const sections = {
  meta: {name: "attention-lab/sections"},
  preprocess(text, filename) {
    const lines = text.split("\n");
    const found = [];
    lines.forEach((line, i) => {
      const match = MARKER.exec(line);
      if (match) found.push({name: match[1], marker: i});
    });
    starts.set(filename, found.map(({marker}) => marker + 1));
    return found.map(({name, marker}, k) => ({
      text: lines.slice(marker + 1, k + 1 < found.length ? found[k + 1].marker : lines.length).join("\n"),
      filename: `${name}.js`,
    }));
  },
  postprocess(messages, filename) {
    const offsets = starts.get(filename) ?? [];
    return messages.flatMap((list, k) => list.map((message) => ({
      ...message,
      line: message.line + offsets[k],
      ...(message.endLine == null ? {} : {endLine: message.endLine + offsets[k]}),
    })));
  },
  supportsAutofix: false,
};

// The names a script's function receives: for a file and for each of its sections.
const receives = (file, names) => ({
  files: [file, `${file}/**`],
  languageOptions: {globals: Object.fromEntries(names.map((name) => [name, "readonly"]))},
});
// Panel's ReactiveHTML scripts get the component's parameters (data), its model and view, a
// scratch object kept between scripts (state), `self` (to call its other scripts) and each
// element of its template with an id.
const REACTIVE = ["data", "model", "state", "view", "self"];

module.exports = [
  js.configs.recommended,
  {
    rules: {
      "no-unused-vars": ["error", {caughtErrors: "none"}],
      eqeqeq: ["error", "smart"],
      "no-var": "error",
      "prefer-const": "error",
    },
  },
  {
    files: ["app/js/**/*.js"],
    languageOptions: {
      sourceType: "script",
      parserOptions: {ecmaFeatures: {globalReturn: true}},
    },
  },
  {files: SECTION_FILES, processor: sections},
  // Every browser script but the pipeline sees the page; the pipeline is pure arithmetic, and
  // Node runs it too.
  {
    files: ["app/js/**/*.js"],
    ignores: ["app/js/pipeline.js"],
    languageOptions: {globals: globals.browser},
  },
  {
    files: ["app/js/pipeline.js"],
    rules: {"no-unused-vars": ["error", {caughtErrors: "none", varsIgnorePattern: "^previewPipeline$"}]},
  },
  receives("app/js/preview.js", [
    "previewPipeline", "addr", "pay", "rows", "params", "geometry", "contributions", "distractors",
    "key_tips", "value_tips", "query_tip", "weights", "weights_extra", "logits", "entropy_sweep",
    "entropy_now", "throttle_ms", "cb_obj", "cb_data", "cb_context",
  ]),
  // Placeholders the Python side fills in (app/js/__init__.py `source`).
  receives("app/js/replica_watch.js", ["__ENDPOINT__", "__PROCESS_ID__", "__POLL_MS__"]),
  receives("app/js/reconnect_watch.js", ["__RELOAD_AFTER_MS__", "__POLL_MS__"]),
  receives("app/js/upload_guard.js", [...REACTIVE, "size_guard", "__LIMIT__"]),
  receives("app/js/copy_link.js", ["source"]),
  receives("app/js/control_names.js", [...REACTIVE, "a11y", "Bokeh"]),
  receives("app/js/page_structure.js", [...REACTIVE, "structure", "__SIDEBAR_NAME__", "__DIALOG_NAME__"]),
  receives("app/js/tab_keys.js", [...REACTIVE, "tab_keys", "Bokeh"]),
  receives("app/js/page_tools.js", [...REACTIVE, "toggle_btn", "keys_btn", "keys_panel", "Bokeh"]),
  receives("app/js/shown_signal.js", [...REACTIVE, "box", "show"]),
  receives("app/js/disclosure_button.js", [...REACTIVE, "btn", "arrow", "text"]),
  receives("app/js/live_summary.js", [...REACTIVE, "summary", "news"]),
  receives("app/js/tip_keys.js", [...REACTIVE, "row", "help"]),
  receives("app/js/control_pointer.js", [...REACTIVE, "said"]),
  receives("app/js/class_link.js", [...REACTIVE, "teach_form", "teach_btn"]),
  receives("app/js/language_menu.js", [...REACTIVE, "menu", "toggle", "name", "choices"]),
  receives("app/js/slider_ticks.js", ["tick", "index", "ticks", "sign"]),
  {
    files: ["tests/js/**/*.js", "eslint.config.js"],
    languageOptions: {sourceType: "commonjs", globals: globals.node},
  },
];
