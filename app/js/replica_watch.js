// Runs in the browser when the websocket is lost (app/server/replica.py installs it): asks the
// server which process answers now, and reloads the page (its URL holds the whole lab) as soon
// as that is another process than the one that built the page. Placeholders, filled in by
// replica.py: ENDPOINT (the relative URL to ask, so a --prefix is honoured), PROCESS_ID (the
// process that built this page) and POLL_MS (how often to ask).
// @uses connection_watch.js
const processOf = async (reply) => (await reply.json()).process;
window.__labConnection.watch("replica", __ENDPOINT__, __POLL_MS__, processOf, (now) => {
  if (now !== __PROCESS_ID__) {
    window.location.reload();
  }
});
