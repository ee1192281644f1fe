// Runs in the browser when the websocket is lost (app/server/replica.py installs it): asks the
// server which process answers now, and reloads the page (its URL holds the whole lab) as soon
// as that is another process than the one that built the page. Placeholders, filled in by
// replica.py: ENDPOINT (the relative URL to ask, so a --prefix is honoured), PROCESS_ID (the
// process that built this page) and POLL_MS (how often to ask).
const lab = window.__labReplica = window.__labReplica || {watch: null};
if (lab.watch == null) {
  lab.watch = setInterval(async () => {
    let now = null;
    try {
      const reply = await fetch(__ENDPOINT__, {cache: "no-store"});
      if (!reply.ok) { return; }
      now = (await reply.json()).process;
    } catch (error) {
      return;  // nothing answers yet
    }
    clearInterval(lab.watch);
    lab.watch = null;
    if (now !== __PROCESS_ID__) {
      window.location.reload();
    }
  }, __POLL_MS__);
}
