"use strict";
// The watches on a lost websocket (app/js/reconnect_watch.js, replica_watch.js) and the one
// poller they share (connection_watch.js), on a stand-in page with its own clock, timers and
// server. Run by tests/js/test_browser_scripts.py, or by hand: node --test tests/js/
// LAB_SCRIPTS_DIR names another folder to read the scripts from (the pytest test feeds broken
// copies and expects these tests to fail).

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const test = require("node:test");
const vm = require("node:vm");

const SCRIPTS = process.env.LAB_SCRIPTS_DIR || path.resolve(__dirname, "..", "..", "app", "js");
const POLL_MS = 2000;
const RELOAD_AFTER_MS = 10000;

// A script as app/js/__init__.py `source` sends it: the files it uses first, placeholders filled.
function source(name, values) {
  const text = fs.readFileSync(path.join(SCRIPTS, name), "utf8");
  const used = [...text.matchAll(/^\/\/ @uses ([\w.-]+\.js)[ \t]*$/gm)].map((m) => m[1]);
  const code = [...used.map((u) => fs.readFileSync(path.join(SCRIPTS, u), "utf8")), text].join("\n");
  return code.replace(/\b__([A-Z][A-Z0-9_]*)__\b/g, (_, key) => JSON.stringify(values[key]));
}

const RECONNECT = source("reconnect_watch.js", {RELOAD_AFTER_MS, POLL_MS});
const REPLICA = source("replica_watch.js", {ENDPOINT: "replica", PROCESS_ID: "built-here", POLL_MS});

const settle = () => new Promise((resolve) => setImmediate(resolve));

// A page whose server is `server.up` (false: every fetch fails) and answers `server.process`.
function page() {
  const server = {up: false, process: "built-here", status: 200, asked: []};
  const timers = new Map();
  const clock = {now: 1000, next: 1};
  const window = {location: {reloads: 0, reload() { this.reloads += 1; }}};
  const context = vm.createContext({
    window,
    Date: {now: () => clock.now},
    setInterval: (fn, ms) => { timers.set(clock.next, {fn, ms}); return clock.next++; },
    clearInterval: (id) => { timers.delete(id); },
    fetch: async (url, options) => {
      server.asked.push(options.cache === "no-store" ? url : `${url} (cached)`);
      if (!server.up) throw new Error("offline");
      return {ok: server.status < 300, json: async () => ({process: server.process})};
    },
  });
  // Bokeh's "connection_lost": each watch's CustomJS, run as a function body in strict mode.
  const lose = () => {
    for (const code of [RECONNECT, REPLICA]) {
      vm.runInContext(`(function () {\n'use strict';\n${code}\n})()`, context);
    }
  };
  // `ms` of time passes; every timer due fires, and the replies arrive.
  const wait = async (ms) => {
    for (let t = 0; t < ms; t += POLL_MS) {
      clock.now += POLL_MS;
      for (const {fn, ms: every} of [...timers.values()]) {
        assert.equal(every, POLL_MS);
        fn();
      }
      for (let i = 0; i < 5; i++) await settle();
    }
  };
  return {server, timers, window, lose, wait};
}

test("both watches ask their endpoints on one timer while the server is away", async () => {
  const p = page();
  assert.equal(p.timers.size, 0);
  p.lose();
  assert.equal(p.timers.size, 1, "one poller for both watches");
  await p.wait(3 * POLL_MS);
  assert.equal(p.timers.size, 1);
  assert.deepEqual(p.server.asked, ["liveness", "replica", "liveness", "replica", "liveness", "replica"]);
  assert.equal(p.window.location.reloads, 0);
  assert.equal(p.window.__labReconnect.watch, true);
});

test("a short outage ends both watches without a reload", async () => {
  const p = page();
  p.lose();
  await p.wait(2 * POLL_MS);
  p.server.up = true;
  await p.wait(POLL_MS);
  assert.equal(p.timers.size, 0, "the timer stops once every watch has its answer");
  assert.equal(p.window.location.reloads, 0);
  assert.equal(p.window.__labReconnect.watch, null);
  const asked = p.server.asked.length;
  await p.wait(3 * POLL_MS);
  assert.equal(p.server.asked.length, asked, "nothing is asked once the server has answered");
});

test("an outage long enough to cost the session reloads the page", async () => {
  const p = page();
  p.lose();
  await p.wait(RELOAD_AFTER_MS);
  p.server.up = true;
  await p.wait(POLL_MS);
  assert.equal(p.window.location.reloads, 1);
  assert.equal(p.timers.size, 0);
});

test("another process answering reloads the page at once", async () => {
  const p = page();
  p.lose();
  p.server.up = true;
  p.server.process = "another";
  await p.wait(POLL_MS);
  assert.equal(p.window.location.reloads, 1);
  assert.equal(p.timers.size, 0);
});

test("a refusal or a reply that is not JSON keeps the watches asking", async () => {
  const p = page();
  p.lose();
  p.server.up = true;
  p.server.status = 503;
  await p.wait(2 * POLL_MS);
  assert.equal(p.timers.size, 1);
  assert.equal(p.window.__labReconnect.watch, true);
  p.server.status = 200;
  p.server.process = undefined;  // {"process": undefined}: not this page's process
  await p.wait(POLL_MS);
  assert.equal(p.timers.size, 0);
  assert.equal(p.window.location.reloads, 1);
});

test("a second loss during a watch changes nothing; one after it starts a new watch", async () => {
  const p = page();
  p.lose();
  const since = p.window.__labReconnect.since;
  await p.wait(POLL_MS);
  p.lose();
  assert.equal(p.timers.size, 1);
  assert.equal(p.window.__labReconnect.since, since, "the outage is timed from the first loss");
  p.server.up = true;
  await p.wait(POLL_MS);
  assert.equal(p.timers.size, 0);
  p.server.up = false;
  p.lose();
  assert.equal(p.timers.size, 1);
  assert.ok(p.window.__labReconnect.since > since);
});
