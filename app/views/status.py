"""The one-line summary (a polite live region, so screen readers hear each new route) and the
error and notice banners."""

from __future__ import annotations

import html
from urllib.parse import quote, unquote

import panel as pn
import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.i18n.translator import ENGLISH, Translator
from app.state.sources import MODEL

from .announcer import Announcer
from .notify import notify
from .phrases import phrase_text

# The error banner lies over the top of the stage instead of taking a row of it (see the file).
STATUS_CSS = attention_lab_assets.read_text("components", "status.css")
# A link's warnings: one line each, close together.
LINK_LIST_CSS = attention_lab_assets.read_text("components", "link-notes.css")
# The note that names a model still loading, with its progress bar.
LOADING_CSS = attention_lab_assets.read_text("components", "loading-note.css")


class LiveSummary(ReactiveHTML):
    """The route's one-line summary, shown, and the page's polite live region for what changed
    (`role=status`), out of sight, whose text is replaced in place (`say`).

    The summary changes with every drawing (a drag redraws it several times a second); a screen
    reader hears the news instead, said once a change has settled (app/views/announcer.py).
    Replacing the whole element (as an HTML pane does) would stop some screen readers from
    announcing the change; keeping the element and swapping its text does not.
    """

    # The texts travel percent-encoded and are decoded into textContent: Panel rewrites
    # markup-like characters in the string parameters it sends (a label "A&B" arrived as
    # "A&amp;B", and "<b id=x>A</b>" lost its attribute), and labels come from links and imports.
    encoded_text = param.String(default="")
    # "N:sentence", N counting what was said, so the same sentence twice is said twice.
    encoded_news = param.String(default="")

    _template = (
        '<div id="box"><p id="summary" class="lab-summary"></p>'
        '<p id="news" class="lab-news" role="status" aria-live="polite" aria-atomic="true"></p>'
        "</div>"
    )
    _scripts = js.sections("live_summary.js")  # noqa: RUF012 - Panel reads this

    _stylesheets = [attention_lab_assets.read_text("components", "live-summary.css")]  # noqa: RUF012

    @property
    def text(self) -> str:
        return unquote(self.encoded_text)

    @text.setter
    def text(self, value: str) -> None:
        self.encoded_text = quote(value, safe=" ")

    @property
    def news(self) -> str:
        """The last sentence said through the live region."""
        return unquote(self.encoded_news.partition(":")[2])

    def say(self, sentence: str) -> None:
        count = int(self.encoded_news.partition(":")[0] or 0) + 1
        self.encoded_news = f"{count}:{quote(sentence, safe=' ')}"


def summary_text(text: str) -> str:
    return text or ""


# The banners under the summary, in the order they are shown, each made the first time it has
# something to show: most pages never show one, and each hidden one cost a page's build its
# models (docs/performance.md). All sit in the page's flow: none lies over the headline or a
# control.
BANNERS = ("loading", "link", "error", "notice", "running")


class StatusView(pn.viewable.Viewer):
    """The summary, and its banners: the model still loading, the error (the lab refused the
    last change), a notice (e.g. a fallback), a backend still computing."""

    state = param.ClassSelector(
        class_=param.Parameterized,
        constant=True,
        doc="what it reports on: the source shown (a SourceSwitch), or a LabState alone",
    )

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr, self._ = tr, tr.gettext
        self.summary = LiveSummary(sizing_mode="stretch_width", margin=(4, 10))
        # What changed, said through the summary's live region once it settles.
        self.news = Announcer(self.summary, pn.state.curdoc, tr=tr)
        self._banners: dict[str, pn.pane.PaneBase] = {}
        self._column = pn.Column(
            self.summary,
            sizing_mode="stretch_width",
            css_classes=["lab-status"],
            stylesheets=[STATUS_CSS],
        )
        self._notice_text = ""
        self._link_lines: list[str] = []  # the link's warnings shown
        self._backend = self._computing = ""  # what the running banner says is at work
        self._error_changed(announce=False)
        if "loading" in state.param:
            state.param.watch(self._loading_changed, ["loading", "load_fraction"])
            self._loading_changed()
        if "computing" in state.param:
            state.param.watch(lambda e: self.set_computing(e.new), "computing")

    # Each banner, made (hidden) and put in its place the first time it is asked for.
    @property
    def loading(self) -> pn.pane.HTML:
        # A model the page waits for (a link's or a lesson step's): named, with its progress,
        # in place of the summary of the model drawn meanwhile (SourceSwitch.loading).
        return self._banner(
            "loading",
            lambda: pn.pane.HTML(
                "",
                visible=False,
                sizing_mode="stretch_width",
                css_classes=["lab-loading-note"],
                stylesheets=[LOADING_CSS],
                margin=(4, 10),
            ),
        )

    @property
    def link(self) -> pn.Row:
        # What a link asked for and the lab could not do, one line each, until dismissed: as
        # toasts they lay over the sidebar's buttons for 10 s, white on amber (1.6:1).
        def make() -> pn.Row:
            text = pn.pane.HTML(
                "", sizing_mode="stretch_width", margin=(0, 4), stylesheets=[LINK_LIST_CSS]
            )
            dismiss = pn.widgets.Button(
                # TRANSLATORS: the button that hides the link's warnings under the headline.
                name=self._("Dismiss"),
                width=90,
                margin=(4, 4),
                css_classes=["lab-link-dismiss"],
            )
            dismiss.on_click(lambda _event: self.dismiss_link_warnings())
            return pn.Row(
                text,
                dismiss,
                visible=False,
                sizing_mode="stretch_width",
                css_classes=["lab-link-notes"],
                margin=(4, 10),
            )

        return self._banner("link", make)

    def link_warning(self, text: str) -> None:
        """Add one line to the link's warnings (plain text, escaped here) and show them; a
        `Phrase` in the page's language."""
        self._link_lines.append(phrase_text(text, self.tr))
        lines = "".join(f"<li>{html.escape(line)}</li>" for line in self._link_lines)
        self.link[0].object = f'<ul role="alert" class="lab-link-list">{lines}</ul>'
        self.link.visible = True
        self._mark_noted()

    def dismiss_link_warnings(self) -> None:
        self._link_lines.clear()
        if "link" in self._banners:
            self.link[0].object = ""
            self.link.visible = False
            self._mark_noted()

    def _mark_noted(self) -> None:
        """Class the column `lab-noted` while a link's warnings or an error show: a phone's
        summary stays at the top of the screen as the page scrolls, and with them it would
        hide a third of it (status.css lets it scroll away meanwhile)."""
        noted = any(n in self._banners and self._banners[n].visible for n in ("link", "error"))
        classes = [c for c in self._column.css_classes if c != "lab-noted"]
        if noted:
            classes.append("lab-noted")
        if classes != self._column.css_classes:
            self._column.css_classes = classes

    @property
    def error(self) -> pn.pane.Alert:
        return self._banner("error", lambda: _alert("danger", "lab-error"))

    @property
    def notice(self) -> pn.pane.Alert:
        return self._banner("notice", lambda: _alert("warning", "lab-notice"))

    @property
    def running(self) -> pn.pane.HTML:
        # A torch backend still at work on the change shown (the numbers are numpy's meanwhile).
        return self._banner(
            "running",
            lambda: pn.pane.HTML(
                "", visible=False, sizing_mode="stretch_width", css_classes=["lab-running"]
            ),
        )

    def _banner(self, name: str, make):
        pane = self._banners.get(name)
        if pane is None:
            pane = self._banners[name] = make()
            shown = [self._banners[n] for n in BANNERS if n in self._banners]
            self._column.objects = [self.summary, *shown]
        return pane

    def update(self, snap) -> None:
        text = headline(snap, self.tr)
        self.news.route(snap)
        if self.summary.text != text:
            self.summary.text = text
        said = phrase_text(getattr(snap, "notice", "") or "", self.tr)
        notice = html.escape(said)
        if self._notice_text != notice:
            self._notice_text = notice
            self.notice.param.update(object=notice, visible=bool(notice))
            if notice:
                notify("warning", said)

    def hold(self, text: str) -> None:
        """The headline while a lesson step holds back what it asks about (it states the
        route and the model's answer): `text` instead, and no route news said meanwhile."""
        if self.summary.text != text:
            self.summary.text = text

    def set_running(self, backend: str) -> None:
        """Say which backend is still computing the change shown, or nothing ('')."""
        self._backend = backend
        self._show_running()

    def set_computing(self, what: str) -> None:
        """Say what a trained model is still computing for the newest change ("SmolLM2-135M
        is reading 441 tokens"), or nothing ('')."""
        self._computing = what
        self._show_running()

    def _show_running(self) -> None:
        busy = self._computing or self._backend
        if not busy and "running" not in self._banners:
            return
        if self._computing:
            # TRANSLATORS: {work} is what a trained model is computing ("SmolLM2-135M is
            # reading 441 tokens").
            said = self._("{work}; the plots show the last head drawn until it answers.")
            text = "⏳ " + said.format(work=html.escape(phrase_text(self._computing, self.tr)))
        else:
            # TRANSLATORS: {backend} is a backend's name (torch-cpu), never translated.
            said = self._(
                "{backend} is computing this change; the plots show the NumPy engine's result "
                "until it answers."
            )
            text = "⏳ " + said.format(backend=html.escape(self._backend))
        self.running.object = f"<span role='status'>{text}</span>" if busy else ""
        self.running.visible = bool(busy)

    def _loading_changed(self, *events) -> None:
        name = self.state.loading
        self.summary.visible = not name
        if not name:
            if "loading" in self._banners:
                self.loading.param.update(object="", visible=False)
            return
        self.loading.param.update(
            object=loading_note(name, self.state.load_fraction, self._drawn_model(), self.tr),
            visible=True,
        )

    def _drawn_model(self) -> str:
        """The model drawn while another loads (the model source's own), if one is known."""
        model = getattr(self.state, "model_ready", False) and self.state.model
        return model.model if model else ""

    def _error_message(self) -> str:
        """The shown source's refusal in the page's language: the model source keeps its own
        (`ModelState.error_text`), the lab's is a `Phrase`."""
        source = self.state
        model = source.model if getattr(source, "model_ready", False) else None
        if model is not None and source.source == MODEL and model.error == source.error:
            return model.error_text(self.tr)
        return phrase_text(source.error, self.tr)

    @param.depends("state.error", watch=True)
    def _error_changed(self, announce: bool = True):
        """The banner; a new refusal (not the page's first drawing of it) also a toast."""
        message = self._error_message()
        if message:
            # TRANSLATORS: the red banner under the headline; {reason} says why (already
            # translated), the <b> tags stay.
            said = self._(
                "<b>That change was not applied:</b> {reason}. The plots still show the last "
                "valid configuration."
            )
            self.error.param.update(object=said.format(reason=html.escape(message)), visible=True)
            if announce:
                notify("error", message, duration=6000)
        elif "error" in self._banners:
            self.error.visible = False
        self._mark_noted()

    def __panel__(self):
        return self._column


def _alert(kind: str, css_class: str) -> pn.pane.Alert:
    return pn.pane.Alert(
        "", alert_type=kind, visible=False, sizing_mode="stretch_width", css_classes=[css_class]
    )


def headline(snap, tr: Translator = ENGLISH) -> str:
    """The route's one-line summary in `tr`'s language (a summary without phrases, which a
    trained head's answer adds to, stays as its source wrote it)."""
    parts = getattr(snap, "summary_parts", ())
    if not parts or tr.code == "en":
        return summary_text(snap.summary)
    return "".join(phrase_text(part, tr) for part in parts)


def loading_note(name: str, fraction: float, drawn: str = "", tr: Translator = ENGLISH) -> str:
    """The main area's note while `name` loads: "Loading SmolLM2-135M… 40%", a progress bar,
    and what the faded plots show meanwhile (escaped HTML)."""
    from app.state.model_state import short_title  # only a page with a model source needs it

    _ = tr.gettext
    title = html.escape(short_title(name))
    pct = max(0, min(100, round(100 * float(fraction))))
    percent = tr.format_percent(pct / 100, "0%")
    if drawn and drawn != name:
        # TRANSLATORS: the loading note: the faded plots are "{model} model's" (a model's name).
        meanwhile = _("the {model} model's").format(model=html.escape(short_title(drawn)))
    else:
        meanwhile = _("the last head drawn")
    # TRANSLATORS: the title of the note while a model loads; {model} its name, {percent} done.
    loading = _("Loading {model}… {percent}").format(model=title, percent=percent)
    label = _("Loading {model}").format(model=title)
    # TRANSLATORS: the loading note; {meanwhile} is "the last head drawn" or "the X model's".
    after = _(
        "Once for this server. Until then the faded plots are {meanwhile}, not {model}'s; a "
        "lesson step on it starts by itself when it is ready."
    ).format(meanwhile=meanwhile, model=title)
    return (
        f'<p class="lab-loading-title">{loading}</p>'
        f'<progress max="100" value="{pct}" aria-label="{label}"></progress>'
        f'<p class="lab-loading-meanwhile">{after}</p>'
    )
