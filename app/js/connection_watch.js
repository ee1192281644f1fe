// The one poller behind every watch on a lost websocket (reconnect_watch.js and replica_watch.js
// name it in a `// @uses` line, so app/js/__init__.py sends this code first, in the same
// script). Bokeh fires "connection_lost" when the websocket drops but has no event for the
// server answering again (a reconnect can even land in a session the page cannot adopt), so a
// watch asks its endpoint until it answers; all the watches share one timer, at the shortest
// period asked for, which stops once none is left.
// window.__labConnection.watch(name, url, everyMs, read, answered): ask `url` (no cache) every
// `everyMs` until it replies with a 2xx status and `read(reply)` resolves, then call
// `answered(thatValue)` once. A watch of the same name already under way is left as it is.
window.__labConnection = window.__labConnection || (() => {
  const watches = new Map();
  const clock = {timer: null, period: Infinity};
  function stop() {
    clearInterval(clock.timer);
    clock.timer = null;
    clock.period = Infinity;
  }
  async function ask(name, watch) {
    let answer = null;
    try {
      const reply = await fetch(watch.url, {cache: "no-store"});
      if (!reply.ok) { return; }
      answer = await watch.read(reply);
    } catch (error) {
      return;  // nothing answers yet
    }
    if (watches.get(name) !== watch) { return; }  // a slower reply to an earlier question
    watches.delete(name);
    if (watches.size === 0) { stop(); }
    watch.answered(answer);
  }
  function tick() {
    for (const [name, watch] of watches) { ask(name, watch); }
  }
  return {
    watch(name, url, everyMs, read, answered) {
      if (watches.has(name)) { return false; }
      watches.set(name, {url, read, answered});
      if (everyMs < clock.period) {
        clearInterval(clock.timer);
        clock.period = everyMs;
        clock.timer = setInterval(tick, everyMs);
      }
      return true;
    },
    watching: (name) => watches.has(name),
  };
})();
