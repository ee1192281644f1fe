// LiveSummary (app/views/status.py): the one-line summary, a polite live region whose text is
// replaced in place, as the ReactiveHTML scripts Panel runs (`data` is the component's
// parameters, `self` calls its other scripts, `summary` is its element). The sentence arrives
// percent-encoded and is decoded into textContent, never parsed as markup.
// @script render
self.encoded_text()
// @script encoded_text
summary.textContent = decodeURIComponent(data.encoded_text)
