// Runs in the browser when the websocket is lost (app/server/reconnect.py installs it): polls
// the liveness endpoint, and once the server answers again after an outage long enough that
// the session may be gone, reloads the page (its URL holds the whole lab). Placeholders, filled
// in by reconnect.py: RELOAD_AFTER_MS (the shortest outage that reloads) and POLL_MS (how often
// to poll).
const lab = window.__labReconnect = window.__labReconnect || {watch: null, since: null};
if (lab.watch == null) {
  lab.since = Date.now();
  lab.watch = setInterval(async () => {
    try {
      const reply = await fetch("liveness", {cache: "no-store"});
      if (!reply.ok) { return; }
    } catch (error) {
      return;  // the server is still out of reach
    }
    clearInterval(lab.watch);
    lab.watch = null;
    if (Date.now() - lab.since >= __RELOAD_AFTER_MS__) {
      window.location.reload();
    }
  }, __POLL_MS__);
}
