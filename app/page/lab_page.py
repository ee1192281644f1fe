"""`create_app()`: one browser session's lab page, and `Lab`, the composition root that makes it.

Everything here is built per call (per session): the state, every widget, figure and
ColumnDataSource. `Lab` registers each part of the page by name with how to build, draw and
release it (app/page/parts.py); the first screen is built at once, everything else the first
time it is needed. One watcher on `sources.snapshot` draws every part that exists inside a
single `pn.io.hold()`, so the browser receives one message per change. Where each part sits on
the page is app/page/layout.py's job.
"""

from __future__ import annotations

import logging
import time
from weakref import WeakKeyDictionary

import panel as pn

import attention_lab_assets
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.page import lab_parts
from app.page import later_parts as later
from app.page.a11y import ControlPointer, PageTools, keys_help
from app.page.class_link import join_classes
from app.page.deferred import Deferred, Disclosure
from app.page.lab_parts import PAIR_ROWS, SCENE_LABEL
from app.page.language_menu import LanguageMenu
from app.page.layout import LESSONS, PageLayout
from app.page.page_style import PRESENTER_TEXT_SCALE, PageStyle
from app.page.parts import Parts
from app.page.session_language import requested_language
from app.page.session_thread import on_session_thread
from app.page.step_follower import (
    MORE_SETTINGS,
    MORE_SETTINGS_BUTTON,
    StepFollower,
    pointer_words,
)
from app.page.urlsync import UrlSync
from app.patches.documents import serve_stylesheets_locally
from app.patches.html_language import speak
from app.state import settings_schema
from app.state.lab_state import LabState
from app.state.sources import MODEL, SourceSwitch
from app.views.controls import ControlsPanel
from app.views.geometry import GeometryView
from app.views.lesson_panel import LessonsView, first_step_of, is_model_step
from app.views.logits import LogitsView
from app.views.notify import notify, toast_types
from app.views.plot_text import PlotText
from app.views.preview import attach_preview
from app.views.status import StatusView
from app.views.style import LabDesign
from app.views.weights import WeightsView

__all__ = [
    "MORE_SETTINGS",
    "MORE_SETTINGS_BUTTON",
    "MORE_SETTINGS_NAMES",
    "PAIR_ROWS",
    "PRESENTER_TEXT_SCALE",
    "SCENE_LABEL",
    "TITLE",
    "Lab",
    "create_app",
]

TITLE = N_("Attention Lab")
# A trained head's planes are projections of its d_head-dimensional vectors (engine/heads.py).
# Each axis's title, longest first: the longest that fits the plane's frame is shown (a 720p
# projector's plane cut "along the head's output" to "along the head's outpu").
# TRANSLATORS: the axes of a trained head's planes (projections), each longest first.
PROJECTION_CAPTIONS = {
    "address": (
        (N_("along q: every q·k drawn is exact"), N_("along q (q·k exact)"), N_("along q")),
        (N_("towards the top key"), N_("to the top key"), N_("top key")),
    ),
    "payload": (
        (N_("along the head's output"), N_("along the output"), N_("output")),
        (N_("towards the largest w·v"), N_("to the largest w·v"), N_("largest w·v")),
    ),
}


def captions_in(tr) -> dict:
    """`PROJECTION_CAPTIONS` in the session's language."""
    return {
        plane: tuple(tuple(tr.gettext(v) for v in variants) for variants in axes)
        for plane, axes in PROJECTION_CAPTIONS.items()
    }


# The state's settings whose controls are behind "More settings" (not the query position: each
# scenario sets its own, and it matters only once "Causal" is on).
CANDIDATE_SETTINGS = tuple(
    name
    for name in settings_schema.controls_in(settings_schema.MORE_SETTINGS)
    if name != "query_position"
)
# What the lessons call the controls there (in bold, by their page labels; tests/app checks
# them): the settings' and the pairs editor's (app/views/pairs.py).
MORE_SETTINGS_NAMES = frozenset(
    {
        field.short_label
        for field in settings_schema.controls_in(settings_schema.MORE_SETTINGS).values()
    }
    | {"Swap the value of", "with the value of", "Swap values", "Reverse the pairs"}
)


def _lab_css() -> list[str]:
    return [attention_lab_assets.read_text(attention_lab_assets.LAB_CSS)]


class Lab:
    """The composition root of one session's page: its parts by name (app/page/lab_parts.py),
    each built on first need, placed by PageLayout, and the single redraw path that feeds them.
    The first screen's views are attributes; every other part is `lab.parts.built(name)` (None
    until built) or `lab.parts.get(name)` (built now)."""

    def __init__(self, state: LabState, tr: Translator = ENGLISH):
        self.state = state
        self.tr = tr  # the session's language (app/i18n/translator.py)
        self.doc = pn.state.curdoc
        served = self.doc is not None and self.doc.session_context is not None
        # Hand-made scenarios or a trained model's head: one snapshot, whichever is shown.
        self.sources = SourceSwitch(state)
        self.parts = parts = Parts()
        lab_parts.register_first_screen(self)
        lab_parts.register_teaching_tabs(self)
        self.status: StatusView = parts.get("status")
        self.geometry: GeometryView = parts.get("geometry")
        self.logits: LogitsView = parts.get("logits")
        self.weights: WeightsView = parts.get("weights")
        self.scene: PlotText = parts.get("scene")
        self.controls: ControlsPanel = parts.get("controls")
        self.analysis: Deferred = parts.get("analysis")
        self.more_settings: Disclosure = parts.get("more_settings")
        self.tools = PageTools(margin=(0, 10), **self._tools_text())
        # A step's controls, shown; it says where they are in the page's language.
        self.pointer = ControlPointer(width=0, height=0, margin=0, words=pointer_words(tr))
        parts.add(
            "lessons",
            lambda: LessonsView(
                state, sources=self.sources, show_ghost=self.geometry.set_ghost, tr=tr
            ),
            eager=True,
        )
        self.lessons: LessonsView = parts.get("lessons")
        self.lessons.param.watch(self._held_changed, "held")
        self.class_link, classroom = join_classes(
            self.doc, self.lessons, style_figure=self._style, tr=tr
        )
        self._translate_header()
        parts.add(
            "classroom", lambda: classroom, release=lambda view: view.session.release(), eager=True
        )
        self.classroom = classroom
        # Work for a later turn of the server's loop once nothing else waits (in-process, at
        # once): a class's Next then reaches every follower before any page tidies up.
        later = on_session_thread(self.doc, when_idle=True) if served else (lambda w: w())
        self.follower = StepFollower(
            state=state,
            lessons=self.lessons,
            pointer=self.pointer,
            more_settings=self.more_settings,
            status=self.status,
            session=classroom.session,
            settings_built=lambda: parts.built("candidates") is not None,
            watched_settings=CANDIDATE_SETTINGS,
            behind_more_settings=MORE_SETTINGS_NAMES,
            later=later,
        )
        parts.add("layout", lambda: PageLayout(parts, self.sources, self.doc, self.pointer, tr))
        self.style = PageStyle(self.figures(), tools=self.tools)
        self.preview = attach_preview(self.geometry, self.weights, self.logits)  # live drag
        if served:
            # Every result made off this thread (torch runs, a model's runs, its maps and
            # receipt: app/state/jobs.py) comes back through the session's one hand-over. A
            # link's may arrive before the browser is connected, when Panel drops a change:
            # it waits for the page to have loaded.
            to_session = on_session_thread(self.doc)
            state.handover.to = lambda work: to_session(lambda: pn.state.onload(work))
        state.param.watch(lambda event: self.status.set_running(event.new), "running")
        self.url: UrlSync | None = None  # set by create_app once the page has a location
        self.drawn_at = 0.0
        self.sources.param.watch(self._source_changed, "source")
        self.sources.param.watch(self.redraw, "snapshot")
        self.redraw()

    # ------------------------------------------------------------------ the header

    def _tools_text(self) -> dict[str, str]:
        _ = self.tr.gettext
        return {
            # TRANSLATORS: the header's button that opens the keyboard help.
            "keys_text": _("Keys"),
            "presenter_text": _("Presenter mode"),
            "tools_name": _("Page tools"),
            # TRANSLATORS: the page's first link (the first Tab): it focuses the lesson.
            "skip_text": _("Skip to the lesson"),
            "lessons_tab": _(LESSONS),
            **keys_help(self.tr),
        }

    def _translate_header(self) -> None:
        """ "Teach a class" and the language menu, in the session's language."""
        _ = self.tr.gettext
        self.class_link.param.update(
            teach_text=_("Teach a class"),
            teach_title=_("Start a class: students join with a code and follow your steps"),
        )
        # TRANSLATORS: the name of the header's language menu.
        self.language_menu = LanguageMenu(
            label=_("Language"),
            current=self.tr.code,
            tag=self.tr.lang,
            direction=self.tr.dir,
            title=_(TITLE),
            margin=0,
        )

    # ------------------------------------------------------------------ where things go

    @property
    def layout(self) -> PageLayout:
        return self.parts.get("layout")

    def sidebar(self) -> list:
        return self.layout.sidebar

    def main_area(self) -> list:
        return self.layout.main

    def open_tab(self, name: str) -> None:
        """Show a teaching tab by its name (building its view the first time)."""
        self.layout.open_tab(name)

    def figures(self) -> list:
        """The figures of the first screen and, once shown, of the analysis plots."""
        found = [self.geometry.address_fig, self.geometry.payload_fig]
        found += [self.logits.figure, self.weights.figure]
        entropy, dimension, jacobian = (self.parts.built(name) for name in later.ANALYSIS)
        if entropy is not None:
            found += [entropy.figure, dimension.spread, dimension.entropy, jacobian.figure]
        return found

    def _style(self, figure) -> None:
        """A figure built late (the class's chart) gets the page's type and presenter size."""
        self.style.add([figure])

    # ------------------------------------------------------------------ parts built later

    def show_analysis(self) -> None:
        """Build the analysis plots now (the page does it when they are first scrolled to)."""
        self.analysis.show()

    def show_more_settings(self) -> None:
        """Open the sidebar's "More settings" (building its controls the first time)."""
        self.more_settings.show()

    def show_pair_rows(self) -> None:
        """Open "More settings" and, inside it, each pair's inputs (built the first time)."""
        self.show_more_settings()
        self.parts.get("pair_rows_section").show()

    def show_head_grid(self) -> None:
        """Build every head's grid now (the page does it when it is first scrolled to)."""
        every_head = self.parts.built("every_head")
        if every_head is not None:
            every_head.show()

    # ------------------------------------------------------------------ what the page follows

    def _held_changed(self, event) -> None:
        """A step opened (its views held back) or measured (shown): redraw them."""
        if self.parts.held != frozenset(event.new):
            self.parts.held = frozenset(event.new)
            self.redraw()

    def _source_changed(self, *events) -> None:
        """Show the active source's controls and views (the model's are built on first use)."""
        if self.parts.built("layout") is None:
            return  # the page is not laid out yet; the layout reads the source when it is
        if self.doc is None:
            self._show_source()
            return
        # Bokeh re-walks the document's model graph after each layout change; frozen, once.
        with self.doc.models.freeze(), pn.io.hold(self.doc):
            self._show_source()

    def _show_source(self) -> None:
        model = self.sources.source == MODEL
        if model and self.parts.built("model_panel") is None:
            get = self.parts.get
            # The Causal map tab's views are built when it is first opened (PageLayout).
            self.layout.place_model_views(get("model_panel"), get("model_main"), get("every_head"))
        self.layout.show_source(model)
        self.geometry.set_captions(captions_in(self.tr) if model else None)
        if model:
            self.offer_model_lesson()
        self.redraw()  # the snapshot arrived before these views existed

    def offer_model_lesson(self, *events) -> None:
        """Show (not load: the student decides) the first step on the model the page opens, the
        one a link or the sidebar asks for even while it loads; a step in the address stays."""
        m = self.sources.model
        wanted = m.loading or m.model
        step = self.lessons.step
        if self.lessons.lesson or (is_model_step(step) and step.model == wanted):
            return
        self.lessons.show(first_step_of(wanted))

    # ------------------------------------------------------------------ drawing

    def redraw(self, *events) -> None:
        snap = self.sources.snapshot
        if snap is None:
            return
        with pn.io.hold(self.doc):
            self.parts.draw(snap)
            self.style.rescale()  # a view may have written an unscaled size
            if self.url is not None:
                # The new address rides in the same message as the plots (its own watcher,
                # which runs next, then finds it written): one message per change, not two.
                self.url.write()
        self.drawn_at = time.perf_counter()  # read by tools/bench_ui.py

    # ------------------------------------------------------------------ the end of a session

    def release(self) -> None:
        """Undo what this page registered outside itself, so all of it can be freed, and stop
        its work in the background (nothing is delivered to a closed page)."""
        self.parts.release()
        self.state.close()
        if self.sources.model_ready:
            self.sources.model.close()

    def session_ended(self, session_context) -> None:
        """Bokeh's hook for a discarded session (the signature it requires)."""
        self.release()


# Each served page's translator, by its document: Panel's exception handler is called without
# the page, in the session's document (pn.state.curdoc); a closed page's entry goes with it.
_PAGE_LANGUAGES: WeakKeyDictionary = WeakKeyDictionary()


def _report_problem(exc: BaseException) -> None:
    """Panel's handler for an exception in a browser-event callback: the traceback goes to the
    server log, the page gets one sentence in its language, and the session (with its last
    drawing) lives on."""
    logging.getLogger(__name__).error("lab callback failed", exc_info=exc)
    doc = pn.state.curdoc
    _ = (_PAGE_LANGUAGES.get(doc, ENGLISH) if doc is not None else ENGLISH).gettext
    # TRANSLATORS: a toast; {name} is the Python exception's name (ValueError), not translated.
    said = _("That action failed ({name}); the lab kept its last valid state.")
    notify("error", said.format(name=type(exc).__name__))


def create_app(
    state: LabState | None = None, language: str | None = None
) -> pn.template.BootstrapTemplate:
    """Build one session's page. Call it once per session (app/server/serve.py does).
    `language`: a key of app.i18n.languages.LANGUAGES; by default the request's choice
    (app/page/session_language.py)."""
    serve_stylesheets_locally(pn.state.curdoc)  # none from the CDN: app/patches/documents.py
    choice = requested_language(pn.state.curdoc) if language is None else None
    tr = Translator(choice.code if choice is not None else language)
    if pn.state.curdoc is not None:
        _PAGE_LANGUAGES[pn.state.curdoc] = tr
    _ = tr.gettext
    # Inside a session Panel keeps these settings per document (pn.config's session
    # overrides), so each page's reconnect notice is in its own language.
    pn.extension(
        notifications=True,
        reconnect=True,
        # TRANSLATORS: a toast while the page has lost its server and tries to reconnect.
        disconnect_notification=_("Connection to the lab server lost; trying to reconnect..."),
        ready_notification="",
        throttled=False,
        exception_handler=_report_problem,
    )
    state = state or LabState()
    lab = Lab(state, tr)
    template = pn.template.BootstrapTemplate(
        title=tr.gettext(TITLE),
        sidebar=lab.sidebar(),
        main=lab.main_area(),
        header=[pn.Row(lab.class_link, lab.language_menu, lab.tools, margin=0)],
        sidebar_width=360,
        header_background="#0b3d5c",
        design=LabDesign,
        raw_css=_lab_css(),
        meta_description="An interactive laboratory for scaled dot-product attention",
        # Without it a phone lays the page out 980 px wide and shrinks it to fit: tiny text.
        meta_viewport="width=device-width, initial-scale=1",
        # Panel's busy flag is one per process: with a spinner in every page, each change in
        # one session sent an update to every open session (O(sessions) work per change).
        busy_indicator=None,
    )
    speak(template, tr.lang, tr.dir)  # <html lang dir> (app/patches/html_language.py)
    if template.notifications is not None:
        # Bottom right, a bad link's toasts lay over the lesson's Measure button (lab.css).
        template.notifications.position = "bottom-left"
        template.notifications.types = toast_types()  # white text at AA contrast on each
    lab.classroom.attach(template, lab.class_link)
    location = pn.state.location
    if location is not None:
        try:
            lab.url = UrlSync(
                lab.sources,
                location,
                ["source"],
                notify=lab.status.link_warning,  # in the page's flow, not a toast
                lessons=lab.lessons,
                tools=lab.tools,
                classroom=lab.classroom,
                # The address keeps a language the link chose; a wrong one is named once.
                language=choice.code if choice is not None and choice.from_link else language,
                notices=[choice.notice] if choice is not None and choice.notice else [],
            )
        except Exception as exc:  # noqa: BLE001 - a bad link must never cost the page
            logging.getLogger(__name__).exception("URL sync failed")
            _ = lab.tr.gettext
            said = _("The link could not be read ({error}); showing defaults.")
            notify("error", said.format(error=type(exc).__name__))
    doc = pn.state.curdoc
    if doc is not None:
        doc.on_session_destroyed(lab.session_ended)
    template.lab = lab  # tests and the benchmark reach the views through the page
    return template
