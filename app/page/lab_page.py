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
from functools import partial

import panel as pn

import attention_lab_assets
from app.lessons.lab_lessons import control_names
from app.page import held
from app.page import later_parts as later
from app.page.a11y import ControlPointer, PageTools
from app.page.class_link import join_classes
from app.page.deferred import Deferred, Disclosure
from app.page.layout import PageLayout
from app.page.page_style import PRESENTER_TEXT_SCALE, PageStyle
from app.page.parts import Parts
from app.page.session_thread import on_session_thread
from app.page.urlsync import UrlSync
from app.patches.documents import serve_stylesheets_locally
from app.state.lab_state import LabState
from app.state.route_news import vote_counted
from app.state.scene_tables import first_screen
from app.state.sources import MODEL, SourceSwitch
from app.views.analysis import AuditView, DiagnosisView
from app.views.controls import CandidateControls, ControlsPanel
from app.views.dimension_sweep import DimensionView
from app.views.entropy import EntropyView
from app.views.export_panel import ExportView
from app.views.geometry import GeometryView
from app.views.jacobian import JacobianView
from app.views.lesson_panel import LessonsView, first_step_of, is_model_step
from app.views.logits import LogitsView
from app.views.notify import notify, toast_types
from app.views.pair_rows import PairRows
from app.views.pairs import PairsEditor
from app.views.plot_text import PlotText
from app.views.preview import attach_preview
from app.views.status import StatusView
from app.views.style import LabDesign
from app.views.tip_keys import TipKeys
from app.views.weights import WeightsView
from engine.scenarios import SCENARIOS

__all__ = ["MORE_SETTINGS_NAMES", "PRESENTER_TEXT_SCALE", "TITLE", "Lab", "create_app"]

TITLE = "Attention Lab"
# A trained head's planes are projections of its d_head-dimensional vectors (engine/heads.py).
# Each axis's title, longest first: the longest that fits the plane's frame is shown (a 720p
# projector's plane cut "along the head's output" to "along the head's outpu").
PROJECTION_CAPTIONS = {
    "address": (
        ("along q: every q·k drawn is exact", "along q (q·k exact)", "along q"),
        ("towards the top key", "to the top key", "top key"),
    ),
    "payload": (
        ("along the head's output", "along the output", "output"),
        ("towards the largest w·v", "to the largest w·v", "largest w·v"),
    ),
}
MORE_SETTINGS = "More settings: candidates, engine, key/value pairs"
MORE_SETTINGS_BUTTON = MORE_SETTINGS.split(":")[0]  # what the pointer finds it by
PAIR_ROWS = "Each pair's key, value and mask"
SCENE_LABEL = "The plots above in words"
# The state's settings whose controls are behind "More settings" (not the query position: each
# scenario sets its own, and it matters only once "Causal" is on).
CANDIDATE_SETTINGS = (
    "causal",
    "distractors",
    "distractor_norm",
    "distractor_similarity",
    "null_route",
    "null_threshold",
    "seed",
    "backend",
)
# What the lessons call those controls (in bold, by their page labels; tests/app checks them).
MORE_SETTINGS_NAMES = frozenset(
    {
        "Causal",
        "Query position",
        "Distractor keys",
        "Distractor norm",
        "Distractor similarity to q",
        "Null route",
        "Null-route threshold",
        "Random seed",
        "Backend",
        "Swap the value of",
        "with the value of",
        "Swap values",
        "Reverse the pairs",
    }
)


def _lab_css() -> list[str]:
    return [attention_lab_assets.read_text(attention_lab_assets.LAB_CSS)]


def _update(view, snap) -> None:
    view.update(snap)


def _draw_dimension(view, snap) -> None:
    view.update(snap, snap.d_k)


def _show_scene(view, snap) -> None:
    view.show(first_screen(snap))


class Lab:
    """The composition root of one session's page: its parts by name (app/page/parts.py), each
    built on first need (app/page/later_parts.py), placed by PageLayout, and the single redraw
    path that feeds them. A part is also read as an attribute: `lab.geometry`, or `lab.entropy`
    (None until built)."""

    def __init__(self, state: LabState):
        self.state = state
        self.doc = pn.state.curdoc
        served = self.doc is not None and self.doc.session_context is not None
        # Hand-made scenarios or a trained model's head: one snapshot, whichever is shown.
        self.sources = SourceSwitch(state)
        self.parts = Parts()
        add = self.parts.add  # in drawing order; the first screen is built now
        # Each part that can show what a lesson step asks about has a conceal beside its draw:
        # while the step holds it back, until Measure, it is drawn neutral (app/page/held.py).
        add(
            "status",
            lambda: StatusView(self.sources),
            draw=_update,
            conceal=held.headline,
            eager=True,
        )
        add(
            "geometry",
            lambda: GeometryView(state),
            draw=self._draw_geometry,
            conceal=held.planes(self._draw_geometry),
            eager=True,
        )
        # The trained model's views, built when the page first opens a model, drawn while shown.
        model_shown = self._model_shown
        note = held.found_head_note(model_shown)
        add(
            "model_panel",
            partial(later.model_panel, self),
            draw=lambda view, snap: note(view, snap, frozenset()),
            conceal=note,
        )
        add(
            "model_main",
            partial(later.model_main, self),
            draw=self._draw_model_view,
            conceal=held.model_answer(model_shown, self._draw_model_view),
        )
        add("causal_state", partial(later.causal_state, self))
        add("causal_view", partial(later.causal_view, self))
        add("receipt_state", partial(later.receipt_state, self))
        add("receipt_view", partial(later.receipt_view, self))
        add("every_head", partial(later.every_head, self))
        add(
            "head_grid",
            partial(later.head_grid, self),
            draw=self._draw_model_view,
            conceal=held.every_head(model_shown, self._draw_model_view),
        )
        route = held.WEIGHTS
        add(
            "logits",
            LogitsView,
            draw=_update,
            conceal=held.covering(route, "Logits", _update),
            eager=True,
        )
        add(
            "weights",
            WeightsView,
            draw=_update,
            conceal=held.covering(route, "Weights", _update),
            eager=True,
        )
        # The first screen's plots in words, for a screen reader (app/views/plot_text.py).
        add(
            "scene",
            lambda: PlotText(SCENE_LABEL),
            draw=_show_scene,
            conceal=held.plots_in_words(_show_scene),
            eager=True,
        )
        # The analysis plots below the first screen are built when first scrolled to (see
        # app/page/deferred.py): a quarter of a page's models, which most visits never see.
        add("entropy", EntropyView, draw=_update, conceal=held.covering(route, "Entropy", _update))
        add(
            "dimension",
            DimensionView,
            draw=_draw_dimension,
            conceal=held.covering(route, "Entropy against d_k", _draw_dimension),
        )
        add(
            "jacobian",
            JacobianView,
            draw=_update,
            conceal=held.covering(route, "Jacobian", _update),
        )
        self.analysis = Deferred(
            partial(later.analysis, self),
            title="Entropy, softmax Jacobian and d_k",
            note="These three plots are drawn when you scroll here.",
        )
        titles = {name: sc.title for name, sc in SCENARIOS.items()}
        add("controls", lambda: ControlsPanel(state, scenario_titles=titles), eager=True)
        # The planes' tips by keyboard, the drag's equivalent (app/views/tip_keys.py).
        add(
            "tip_keys",
            lambda: TipKeys(state, sizing_mode="stretch_width", margin=(4, 10)),
            draw=_update,
            eager=True,
        )
        # The candidates, engine and key/value pairs sit behind "More settings", built when first
        # opened: a third of a page's server memory and CPU, and folded away on a phone anyway.
        add("candidates", partial(later.candidates, state), release=CandidateControls.release)
        add("pairs", lambda: PairsEditor(state))
        self.more_settings = Disclosure(partial(later.more_settings, self), label=MORE_SETTINGS)
        # Each pair's inputs (five widgets a pair) inside it, behind their own button: no lesson
        # step names them, so a class following its teacher never builds them.
        add("pair_rows", lambda: PairRows(state))
        add(
            "pair_rows_section",
            lambda: Disclosure(partial(self.parts.get, "pair_rows"), label=PAIR_ROWS),
        )
        for name in CANDIDATE_SETTINGS:
            state.param.watch(self._setting_moved, name)
        self.tools = PageTools(margin=(0, 10))
        self.pointer = ControlPointer(width=0, height=0, margin=0)  # a step's controls, shown
        # The other teaching tabs are built the first time they are opened (PageLayout).
        add("diagnosis", lambda: DiagnosisView(state))
        add("audit", lambda: AuditView(state))
        add("export", lambda: ExportView(state))
        ghost = getattr(self.geometry, "set_ghost", None)
        add(
            "lessons",
            lambda: LessonsView(state, sources=self.sources, show_ghost=ghost),
            eager=True,
        )
        self.lessons.param.watch(self._lesson_opened, "lesson")
        self.more_settings.button.param.watch(self._more_settings_opened, "open")
        self.lessons.param.watch(self._measured, "outcome")
        self.lessons.param.watch(self._held_changed, "held")
        self.class_link, classroom = join_classes(self.doc, self.lessons, style_figure=self._style)
        add("classroom", lambda: classroom, release=lambda view: view.session.release(), eager=True)
        classroom.session.param.watch(self._vote_counted, "my_vote")
        add("layout", lambda: PageLayout(self))  # built when create_app asks where things go
        self.style = PageStyle(self.figures(), tools=self.tools)
        self.preview = attach_preview(self.geometry, self.weights, self.logits)  # live drag
        # Work for a later turn of the server's loop once nothing else waits (in-process, at
        # once): a class's Next then reaches every follower before any page tidies up.
        self._later = on_session_thread(self.doc, when_idle=True) if served else (lambda w: w())
        if served:
            state.deliver = on_session_thread(self.doc)  # torch results come back here
            # A model's runs (ModelState.request) too; a link's may arrive before the browser
            # is connected, when Panel drops a change: they wait for the page to have loaded.
            self.sources.deliver = lambda work: state.deliver(lambda: pn.state.onload(work))
        state.param.watch(lambda event: self.status.set_running(event.new), "running")
        self.url: UrlSync | None = None  # set by create_app once the page has a location
        self.drawn_at = 0.0
        self.sources.param.watch(self._source_changed, "source")
        self.sources.param.watch(self.redraw, "snapshot")
        self.redraw()

    def __getattr__(self, name: str):
        parts = self.__dict__.get("parts")
        if parts is not None and name in parts:
            return parts.built(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        if self.entropy is not None:
            found += [self.entropy.figure, self.dimension.spread, self.dimension.entropy]
            found += [self.jacobian.figure]
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
        if self.every_head is not None:
            self.every_head.show()

    # ------------------------------------------------------------------ what the page follows

    def _setting_moved(self, event) -> None:
        # A link, an import, a scenario or a lesson moved a setting that is behind "More
        # settings": show its control, so the page never hides what it is using.
        if self.candidates is None and event.new != self.state.param[event.name].default:
            self.show_more_settings()

    def _lesson_opened(self, event) -> None:
        """A step that names a control behind "More settings" opens it; the sidebar scrolls to
        the controls the step names and outlines them (they were up to 2000 px down)."""
        step = self.lessons.step
        if set(control_names(step)) & MORE_SETTINGS_NAMES and not self.more_settings.button.open:
            if self.classroom.session.role == "student":
                # A class's Next opens this step on every student's page at once, and these
                # controls cost 85-110 ms of server CPU a page to build: 20 s of CPU for a
                # class of 200, which held up the next Next and the votes (measured). So a
                # student opens them with one press, and the pointer shows that button first.
                self.pointer.point([MORE_SETTINGS_BUTTON, *control_names(step)])
                return
            # Built once the server's loop has nothing else waiting: a class's Next reaches
            # the teacher's page first, and its settings after it.
            self._later(lambda: self._open_settings_for(step))
            return
        self._point_at(step)

    def _open_settings_for(self, step) -> None:
        if self.lessons.step is step:  # unless a newer step was opened meanwhile
            self.show_more_settings()  # which points at them (_more_settings_opened)

    def _more_settings_opened(self, event) -> None:
        """Opened, by the page or the student: outline the ones the step names, now drawn."""
        step = self.lessons.step
        if event.new and step is not None and set(control_names(step)) & MORE_SETTINGS_NAMES:
            self._point_at(step)

    def _point_at(self, step) -> None:
        names = control_names(step)
        # The ones the action asks for first: the sidebar scrolls to the first found.
        acted = [n for n in names if f"**{n}**" in step.action]
        self.pointer.point(dict.fromkeys(acted + names))

    def _measured(self, event) -> None:
        """Measure's verdict, told to a screen reader (the status's live region) and scrolled
        into view."""
        if event.new is not None:
            self.status.news.say(self.lessons.verdict)
            self.pointer.show_verdict()

    def _held_changed(self, event) -> None:
        """A step opened (its views held back) or measured (shown): redraw them."""
        if self.parts.held != frozenset(event.new):
            self.parts.held = frozenset(event.new)
            self.redraw()

    def _vote_counted(self, event) -> None:
        """A student's prediction reached the class: say so (not on a rejoin's first drawing)."""
        choices = self.lessons.step.choices
        if event.new is not None and event.new != event.old and 0 <= event.new < len(choices):
            self.status.news.say(vote_counted(choices[event.new]))

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
        if model and self.model_panel is None:
            get = self.parts.get
            # The Causal map tab's views are built when it is first opened (PageLayout).
            self.layout.place_model_views(get("model_panel"), get("model_main"), get("every_head"))
        self.layout.show_source(model)
        self.geometry.set_captions(PROJECTION_CAPTIONS if model else None)
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
            self.draw(snap)
            self.style.rescale()  # a view may have written an unscaled size
            if self.url is not None:
                # The new address rides in the same message as the plots (its own watcher,
                # which runs next, then finds it written): one message per change, not two.
                self.url.write()
        self.drawn_at = time.perf_counter()  # read by tools/bench_ui.py

    def draw(self, snap) -> None:
        """Draw every part that exists from one snapshot (the caller holds the document)."""
        self.parts.draw(snap)

    def _draw_geometry(self, view, snap, *, route: bool = True) -> None:
        view.update(snap, snap.n_pairs, draggable=self.sources.source != MODEL, route=route)

    def _model_shown(self) -> bool:
        return self.sources.source == MODEL

    def _draw_model_view(self, view, snap) -> None:
        if self._model_shown():
            view.update()

    # ------------------------------------------------------------------ the end of a session

    def release(self) -> None:
        """Undo what this page registered outside itself, so all of it can be freed."""
        self.parts.release()

    def session_ended(self, session_context) -> None:
        """Bokeh's hook for a discarded session (the signature it requires)."""
        self.release()


def _report_problem(exc: BaseException) -> None:
    """Panel's handler for an exception in a browser-event callback: the traceback goes to the
    server log, the page gets one sentence, and the session (with its last drawing) lives on."""
    logging.getLogger(__name__).error("lab callback failed", exc_info=exc)
    notify(
        "error", f"That action failed ({type(exc).__name__}); the lab kept its last valid state."
    )


def create_app(state: LabState | None = None) -> pn.template.BootstrapTemplate:
    """Build one session's page. Call it once per session (app/server/serve.py does)."""
    serve_stylesheets_locally(pn.state.curdoc)  # none from the CDN: app/patches/documents.py
    pn.extension(
        notifications=True,
        reconnect=True,
        disconnect_notification=("Connection to the lab server lost; trying to reconnect..."),
        ready_notification="",
        throttled=False,
        exception_handler=_report_problem,
    )
    state = state or LabState()
    lab = Lab(state)
    template = pn.template.BootstrapTemplate(
        title=TITLE,
        sidebar=lab.sidebar(),
        main=lab.main_area(),
        header=[pn.Row(lab.class_link, lab.tools, margin=0)],
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
            )
        except Exception as exc:  # noqa: BLE001 - a bad link must never cost the page
            logging.getLogger(__name__).exception("URL sync failed")
            notify("error", f"The link could not be read ({type(exc).__name__}); showing defaults.")
    doc = pn.state.curdoc
    if doc is not None:
        doc.on_session_destroyed(lab.session_ended)
    template.lab = lab  # tests and the benchmark reach the views through the page
    return template
