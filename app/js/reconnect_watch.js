// Runs in the browser when the websocket is lost (app/server/reconnect.py installs it): polls
// the liveness endpoint, and once the server answers again after an outage long enough that
// the session may be gone, reloads the page (its URL holds the whole lab). Placeholders, filled
// in by reconnect.py: RELOAD_AFTER_MS (the shortest outage that reloads) and POLL_MS (how often
// to poll). `lab.watch` is true while it waits, null once the server has answered.
// @uses connection_watch.js
const lab = window.__labReconnect = window.__labReconnect || {watch: null, since: null};
if (lab.watch == null) {
  lab.since = Date.now();
  lab.watch = window.__labConnection.watch("reconnect", "liveness", __POLL_MS__, () => null, () => {
    lab.watch = null;
    if (Date.now() - lab.since >= __RELOAD_AFTER_MS__) {
      window.location.reload();
    }
  });
}
