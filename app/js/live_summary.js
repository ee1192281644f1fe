// LiveSummary (app/views/status.py): the one-line summary, shown, and the page's one polite
// live region, out of sight, that says what changed once a change has settled
// (app/views/announcer.py), as the ReactiveHTML scripts Panel runs (`data` is the component's
// parameters, `self` calls its other scripts, `summary` and `news` are its elements). Both
// texts arrive percent-encoded and are decoded into textContent, never parsed as markup. The
// news carries a count before its text ("7:The%20route..."), so the same sentence said twice
// is a change and is said again.
// @script render
self.encoded_text()
self.encoded_news()
// @script encoded_text
summary.textContent = decodeURIComponent(data.encoded_text)
// @script encoded_news
const cut = data.encoded_news.indexOf(':')
news.textContent = cut < 0 ? '' : decodeURIComponent(data.encoded_news.slice(cut + 1))
