"""`create_app()`: one browser session's lab page.

Everything here is built per call (per session): the state, every widget, figure and
ColumnDataSource. One watcher on `state.snapshot` pushes each new snapshot into all views
inside a single `pn.io.hold()`, so the browser receives one message per change.
"""

from __future__ import annotations

import logging
import time

import panel as pn

import attention_lab_assets
from app.classroom import codes, shared
from app.classroom.session import STUDENT_COOKIE, ClassSession, teacher_keys
from app.lessons.lab_lessons import control_names
from app.page.a11y import ControlNames, ControlPointer, PageTools
from app.page.class_link import ClassLink
from app.page.deferred import Deferred, Disclosure, fill
from app.page.session_thread import on_session_thread
from app.page.urlsync import UrlSync
from app.patches.documents import serve_stylesheets_locally
from app.state.lab_state import LabState, listed_backends
from app.state.sources import MODEL, SourceSwitch
from app.state.sources import SCENARIOS as HAND_MADE
from app.views.analysis import AuditView, DiagnosisView
from app.views.class_panel import ClassView
from app.views.controls import CandidateControls, ControlsPanel
from app.views.dimension_sweep import DimensionView
from app.views.entropy import EntropyView
from app.views.export_panel import ExportView
from app.views.geometry import GeometryView
from app.views.jacobian import JacobianView
from app.views.lesson_panel import LessonsView, first_step_of, is_model_step
from app.views.logits import LogitsView
from app.views.notify import notify
from app.views.pairs import PairsEditor
from app.views.preview import attach_preview
from app.views.status import StatusView
from app.views.style import LabDesign, TextScale, floor_text, slim
from app.views.weights import WeightsView
from engine.scenarios import SCENARIOS

TITLE = "Attention Lab"
# A trained head's planes are projections of its d_head-dimensional vectors (engine/heads.py).
PROJECTION_CAPTIONS = {
    "address": ("along q: every q·k drawn is exact", "towards the top key"),
    "payload": ("along the head's output", "towards the largest w·v"),
}
SOURCE_LABELS = {"Hand-made vectors": HAND_MADE, "A trained model": MODEL}
SOURCE_LABELS_BY_NAME = {name: label for label, name in SOURCE_LABELS.items()}

MORE_SETTINGS = "More settings: candidates, engine, key/value pairs"
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

# The main area is a size container (assets/lab.css), so 100cqw/100cqh below are its width
# and height. Wide: question, planes and bars on the left, the teaching tabs in a column
# beside them, all inside the first screen; the planes are as large as both the width and the
# height allow. Narrower: the logits go below the fold. Phone: one column, lesson first.
STAGE_CSS = attention_lab_assets.read_text("components", "stage.css")
# Presenter mode: page text goes from 16 to 20 px (assets/lab.css), plot text likewise.
PRESENTER_TEXT_SCALE = 1.25
# Rows of plots under the first screen: two side by side when there is room, else stacked.
FLOW_CSS = attention_lab_assets.read_text("components", "plot-rows.css")
# Every head at once: its boxes take no minimum width from the grid (it scrolls in its own).
HEAD_GRID_CSS = attention_lab_assets.read_text("components", "head-grid.css")
# Each plane is a square of side --plane (set by the stage); side by side when both fit.
PLANES_CSS = attention_lab_assets.read_text("components", "planes.css")
SOURCE_PICKER_CSS = attention_lab_assets.read_text("components", "source-picker.css")


def _lab_css() -> list[str]:
    return [attention_lab_assets.read_text(attention_lab_assets.LAB_CSS)]


class Lab:
    """The views of one session and the single redraw path that feeds them."""

    def __init__(self, state: LabState):
        self.state = state
        # Hand-made scenarios or a trained model's head: one snapshot, whichever is shown.
        self.sources = SourceSwitch(state)
        self.status = StatusView(self.sources)
        self.geometry = GeometryView(state)
        self.logits = LogitsView()
        self.weights = WeightsView()
        # The analysis plots below the first screen are built when first scrolled to (see
        # app/page/deferred.py): a quarter of a page's models, which most visits never see.
        self.entropy = self.dimension = self.jacobian = None
        self.analysis = Deferred(
            self._build_analysis,
            title="Entropy, softmax Jacobian and d_k",
            note="These three plots are drawn when you scroll here.",
        )
        self.controls = ControlsPanel(
            state, scenario_titles={name: sc.title for name, sc in SCENARIOS.items()}
        )
        # The candidates, engine and key/value pairs sit behind "More settings", built when first
        # opened: a third of a page's server memory and CPU, and folded away on a phone anyway.
        self.candidates = self.pairs = None
        self.more_settings = Disclosure(self._build_more_settings, label=MORE_SETTINGS)
        for name in CANDIDATE_SETTINGS:
            state.param.watch(self._setting_moved, name)
        self.tools = PageTools(margin=(0, 10))
        self.pointer = ControlPointer(width=0, height=0, margin=0)  # a step's controls, shown
        # The other teaching tabs are built the first time they are opened (_open_tab).
        self.audit = self.diagnosis = self.export = None
        self.lessons = LessonsView(
            state, sources=self.sources, show_ghost=getattr(self.geometry, "set_ghost", None)
        )
        self.lessons.param.watch(self._lesson_opened, "lesson")
        self._doc = pn.state.curdoc
        self.class_link, self.classroom = self._join_classes()
        self.source_picker = pn.widgets.RadioButtonGroup(
            label="What the lab shows",
            options=list(SOURCE_LABELS),
            value=SOURCE_LABELS_BY_NAME[HAND_MADE],
            color="primary",
            variant="outline",
            sizing_mode="stretch_width",
            margin=(10, 10, 4, 10),
            stylesheets=[SOURCE_PICKER_CSS],  # its buttons wrap when both do not fit
        )
        self.source_picker.param.watch(self._pick_source, "value")
        self.model_panel = None  # the trained-model views, built when a page first opens one
        self.model_main = None
        self.head_grid = None  # every head at once, built when first scrolled to
        self._heads_below = pn.Column(
            visible=False, sizing_mode="stretch_width", margin=0, stylesheets=[HEAD_GRID_CSS]
        )
        self._model_side = pn.Column(visible=False, sizing_mode="stretch_width")
        slim(self.figures())
        floor_text(self.figures())
        self._text_scale = TextScale(self.figures())
        self.tools.param.watch(self._presenter_changed, "presenter")
        self._preview = attach_preview(self.geometry, self.weights, self.logits)  # live drag
        if self._doc is not None and self._doc.session_context is not None:
            state.deliver = on_session_thread(self._doc)  # torch results come back here
        state.param.watch(lambda event: self.status.set_running(event.new), "running")
        self.url: UrlSync | None = None  # set by create_app once the page has a location
        self.drawn_at = 0.0
        self.sources.param.watch(self._source_changed, "source")
        self.sources.param.watch(self.redraw, "snapshot")
        self.redraw()

    def _join_classes(self) -> tuple[ClassLink, ClassView]:
        """This page's part in classes: its student id (a cookie, made here the first time),
        the teacher keys its browser holds, and the view above the lessons."""
        cookies = dict(pn.state.cookies or {}) if self._doc is not None else {}
        student = cookies.get(STUDENT_COOKIE, "")
        if not codes.is_student_id(student):
            student = codes.new_student_id()
        request = getattr(getattr(self._doc, "session_context", None), "request", None)
        served = self._doc is not None and self._doc.session_context is not None
        session = ClassSession(
            shared.current(),
            student_id=student,
            teacher_keys=teacher_keys(cookies),
            client=str(getattr(request, "remote_ip", "") or ""),
            deliver=on_session_thread(self._doc) if served else None,
        )
        view = ClassView(
            session, self.lessons, page_address=self._page_address, style_figure=self._style_chart
        )
        return ClassLink(student=student, margin=0), view

    def _style_chart(self, figure) -> None:
        """A figure built late (the class's chart) gets the page's type and presenter size."""
        slim([figure])
        floor_text([figure])
        self._text_scale.add([figure])
        if self.tools.presenter:
            self._text_scale.apply(PRESENTER_TEXT_SCALE)

    @staticmethod
    def _page_address() -> tuple[str, str]:
        """This page's origin and path, as the browser sees them (the balancer's host)."""
        loc = pn.state.location
        if loc is None or not loc.hostname:
            return "http://localhost:5006", "/app"
        port = f":{loc.port}" if loc.port and loc.port not in ("80", "443") else ""
        # Read from the websocket's request under session reuse: /app/ws is the page's /app.
        path = (loc.pathname or "/app").removesuffix("/ws")
        return f"{loc.protocol or 'http:'}//{loc.hostname}{port}", path

    def release(self) -> None:
        """Undo what this page registered outside itself, so all of it can be freed."""
        self.classroom.session.leave()  # its store subscription
        if self.candidates is not None:
            self.candidates.release()

    def show_more_settings(self) -> None:
        """Open the sidebar's "More settings" (building its controls the first time)."""
        self.more_settings.show()

    def _build_more_settings(self):
        backends = listed_backends()  # never imports torch: see app.state.lab_state.listed_backends
        self.candidates = CandidateControls(
            self.state,
            backend_notes={b.name: ("" if b.available else b.reason) for b in backends},
            unchecked=tuple(b.name for b in backends if not b.checked),
        )
        self.pairs = PairsEditor(self.state)
        pairs_title = pn.pane.Markdown("#### Key / value pairs", margin=(8, 10, 0, 10))
        return pn.Column(
            self.candidates, pairs_title, self.pairs, sizing_mode="stretch_width", margin=0
        )

    def _setting_moved(self, event) -> None:
        # A link, an import, a scenario or a lesson moved a setting that is behind "More
        # settings": show its control, so the page never hides what it is using.
        if self.candidates is None and event.new != self.state.param[event.name].default:
            self.show_more_settings()

    def _lesson_opened(self, event) -> None:
        """A step that names a control behind "More settings" opens it; the sidebar scrolls to
        the controls the step names and outlines them (they were up to 2000 px down)."""
        step = self.lessons.step
        names = control_names(step)
        if set(names) & MORE_SETTINGS_NAMES and not self.more_settings.button.open:
            self.show_more_settings()
        # The ones the action asks for first: the sidebar scrolls to the first found.
        acted = [n for n in names if f"**{n}**" in step.action]
        self.pointer.point(dict.fromkeys(acted + names))

    def session_ended(self, session_context) -> None:
        """Bokeh's hook for a discarded session (the signature it requires)."""
        self.release()

    def _presenter_changed(self, event) -> None:
        # Plot text is drawn on canvases, out of CSS's reach: presenter mode scales it here.
        self._text_scale.apply(PRESENTER_TEXT_SCALE if event.new else 1.0)

    def figures(self) -> list:
        """The figures built so far (the analysis plots join once shown)."""
        return [
            self.geometry.address_fig,
            self.geometry.payload_fig,
            self.logits.figure,
            self.weights.figure,
            *self._analysis_figures(),
        ]

    def _analysis_figures(self) -> list:
        if self.entropy is None:
            return []
        return [
            self.entropy.figure,
            self.dimension.spread,
            self.dimension.entropy,
            self.jacobian.figure,
        ]

    def show_analysis(self) -> None:
        """Build the analysis plots now (the page does it when they are first scrolled to)."""
        self.analysis.show()

    def _build_analysis(self):
        """The entropy, Jacobian and d_k views, styled and drawn like the first screen's."""
        self.entropy, self.dimension, self.jacobian = EntropyView(), DimensionView(), JacobianView()
        figures = self._analysis_figures()
        slim(figures)
        floor_text(figures)
        self._text_scale.add(figures)
        if self.tools.presenter:
            self._text_scale.apply(PRESENTER_TEXT_SCALE)
        # The live drag previews the entropy too, now that its sources exist.
        self._preview.args = {
            **self._preview.args,
            "entropy_sweep": self.entropy.source,
            "entropy_now": self.entropy.current,
        }
        snap = self.sources.snapshot
        if snap is not None:
            self._draw_analysis(snap)
        rows = [pn.Row(self.entropy, self.jacobian), self.dimension.__panel__()]
        for row in rows:
            row.param.update(sizing_mode="stretch_width", stylesheets=[*row.stylesheets, FLOW_CSS])
        return pn.Column(*rows, sizing_mode="stretch_width", margin=0)

    def _draw_analysis(self, snap) -> None:
        if self.entropy is None:
            return
        self.entropy.update(snap)
        self.dimension.update(snap, snap.d_k)
        self.jacobian.update(snap)

    def _pick_source(self, event) -> None:
        source = SOURCE_LABELS.get(event.new)
        if source is None or source == self.sources.source:
            return
        with pn.io.hold(self._doc):
            self.sources.source = source

    def _source_changed(self, *events) -> None:
        """Show the active source's controls and views (the model's are built on first use)."""
        if not hasattr(self, "_teaching"):
            return  # the page is not laid out yet; main_area and sidebar read the source then
        doc = self._doc
        if doc is None:
            self._show_source()
            return
        # Bokeh re-walks the document's model graph after each layout change; frozen, once.
        with doc.models.freeze(), pn.io.hold(doc):
            self._show_source()

    def _build_model_views(self) -> None:
        """The trained model's controls, answer and experiments, styled like the rest."""
        from app.views.model_panel import ModelMainView, ModelPanel

        self.model_panel = ModelPanel(self.sources.model)
        self.sources.model.param.watch(self._offer_model_lesson, ["model", "loading"])
        self.model_main = ModelMainView(self.sources.model)
        figure = self.model_main.prediction.figure
        slim([figure])
        floor_text([figure])
        self._text_scale.add([figure])
        if self.tools.presenter:
            self._text_scale.apply(PRESENTER_TEXT_SCALE)
        self._model_side.objects = [self.model_panel]
        self._prediction = self.model_main.prediction.__panel__()
        grow(self._prediction, "lab-logits")
        self.experiments_tab.objects = [self.model_main]
        from app.state.causal_state import CausalState
        from app.views.causal_view import CausalView

        self.causal_state = CausalState(self.sources.model)
        if self._doc is not None and self._doc.session_context is not None:
            self.causal_state.deliver = on_session_thread(self._doc)
        self.causal_view = CausalView(self.causal_state, self.sources.model)
        figures = [self.causal_view.figure, self.causal_view.patch_figure]
        slim(figures)
        floor_text(figures)
        self._text_scale.add(figures)
        self.causal_tab.objects = [self.causal_view]
        self._heads_below.objects = [
            Deferred(
                self._build_head_grid,
                title="Every head at once, and the open head's whole pattern",
                note="Drawn when you scroll here.",
            )
        ]

    def show_head_grid(self) -> None:
        """Build every head's grid now (the page does it when it is first scrolled to)."""
        if self.model_panel is not None:
            self._heads_below.objects[0].show()

    def _build_head_grid(self):
        from app.views.head_grid import HeadGridView

        self.head_grid = HeadGridView(self.sources.model)
        figures = self.head_grid.figures()
        floor_text(figures)
        self._text_scale.add(figures)
        if self.tools.presenter:
            self._text_scale.apply(PRESENTER_TEXT_SCALE)
        self.head_grid.update()
        return self.head_grid

    def _show_source(self) -> None:
        model = self.sources.source == MODEL
        if model and self.model_panel is None:
            self._build_model_views()
        self.source_picker.value = SOURCE_LABELS_BY_NAME[self.sources.source]
        self._scenario_side.visible = not model
        self._model_side.visible = model
        self.geometry.set_captions(PROJECTION_CAPTIONS if model else None)
        if model:
            self._offer_model_lesson()
        # The model's answer takes the logits' place in the first screen; the logits move below.
        first, below = ([self._prediction], [self._logits]) if model else ([self._logits], [])
        if list(self._logits_cell.objects) != first:
            self._logits_below.objects = []
            self._logits_cell.objects = first
            self._logits_below.objects = below
        self._logits_below.visible = model
        self._heads_below.visible = model
        teaching = self._teaching
        wanted = self._model_tabs if model else self._scenario_tabs
        if list(teaching.objects) != wanted:
            teaching.objects = wanted
            teaching.active = 0
        self.redraw()  # the snapshot arrived before these views existed

    def _offer_model_lesson(self, *events) -> None:
        """Show (not load: the student decides) the first step on the model the page opens, the
        one a link or the sidebar asks for even while it loads; a step in the address stays."""
        m = self.sources.model
        wanted = m.loading or m.model
        step = self.lessons.step
        if self.lessons.lesson or (is_model_step(step) and step.model == wanted):
            return
        self.lessons.show(first_step_of(wanted))

    def redraw(self, *events) -> None:
        snap = self.sources.snapshot
        if snap is None:
            return
        with pn.io.hold(self._doc):
            self.draw(snap)
            if self._text_scale.factor != 1.0:
                self._text_scale.apply()  # a view may have written an unscaled size
            if self.url is not None:
                # The new address rides in the same message as the plots (its own watcher,
                # which runs next, then finds it written): one message per change, not two.
                self.url.write()
        self.drawn_at = time.perf_counter()  # read by tools/bench_ui.py

    def draw(self, snap) -> None:
        """Assign every source from one snapshot (the caller holds the document)."""
        self.status.update(snap)
        model = self.sources.source == MODEL
        self.geometry.update(snap, snap.n_pairs, draggable=not model)
        if model and self.model_main is not None:
            self.model_main.update()
        if model and self.head_grid is not None:
            self.head_grid.update()
        self.logits.update(snap)
        self.weights.update(snap)
        self._draw_analysis(snap)

    def open_tab(self, name: str) -> None:
        """Show a teaching tab by its name (building its view the first time)."""
        names = [tab.name for tab in self._teaching.objects]
        self._teaching.active = names.index(name)

    def _open_tab(self, event) -> None:
        """Build a teaching tab's view when it is first opened: most visits never open them, and
        they were a seventh of a page's memory."""
        tabs = self._teaching.objects
        if not 0 <= event.new < len(tabs):
            return
        holder = tabs[event.new]
        attr, view_class = self._tab_views.get(holder.name, (None, None))
        if view_class is None or getattr(self, attr) is not None:
            return

        def build():
            view = view_class(self.state)
            setattr(self, attr, view)
            return view

        fill(holder, build)

    def main_area(self):
        def tab(name, view):
            # Fills the teaching column; longer content scrolls inside its tab.
            return pn.Column(
                *([view] if view is not None else []),
                name=name,
                scroll=True,
                sizing_mode="stretch_both",
                min_height=0,
            )

        lessons = tab(
            "Lessons",
            pn.Column(self.classroom, self.lessons, sizing_mode="stretch_width", margin=0),
        )
        self._scenario_tabs = [
            lessons,
            tab("Why is it sharp?", None),
            tab("Audit", None),
            tab("Share & export", None),
        ]
        self._tab_views = {
            "Why is it sharp?": ("diagnosis", DiagnosisView),
            "Audit": ("audit", AuditView),
            "Share & export": ("export", ExportView),
        }
        # The hand-made diagnosis, audit and export describe the scenarios, not a model's head.
        self.experiments_tab = pn.Column(name="Experiments")
        self.causal_tab = pn.Column(name="Causal map")
        self._model_tabs = [
            lessons,
            tab("Experiments", self.experiments_tab),
            tab("Causal map", self.causal_tab),
        ]
        teaching = pn.Tabs(
            *self._scenario_tabs,
            # Only the open tab's widgets exist in the page; the others are built when opened.
            dynamic=True,
            sizing_mode="stretch_both",
            css_classes=["lab-teaching"],
        )
        self._teaching = teaching
        teaching.param.watch(self._open_tab, "active")
        planes = self.geometry.__panel__()
        grow(planes, "lab-plane")
        planes.param.update(
            css_classes=[*planes.css_classes, "lab-planes"], stylesheets=[PLANES_CSS]
        )
        weights, logits = self.weights.__panel__(), self.logits.__panel__()
        grow(weights, "lab-weights")
        grow(logits, "lab-logits")
        # With a trained model open, its answer takes the logits' cell and the logits move
        # below the first screen (the answer's view is built on first use).
        self._logits = logits
        self._logits_cell = pn.Column(
            logits, sizing_mode="stretch_both", css_classes=["lab-logits"], margin=0
        )
        self._logits_below = pn.Column(visible=False, sizing_mode="stretch_width", height=360)
        # One grid: the question, both planes and the weights fit the first screen (the
        # stylesheet places them by the width of the main area; see STAGE_CSS).
        stage = pn.Column(
            self.status,
            planes,
            weights,
            self._logits_cell,
            teaching,
            sizing_mode="stretch_both",  # its height comes from STAGE_CSS
            css_classes=["lab-stage"],
            stylesheets=[STAGE_CSS],
        )
        self._logits_below.param.update(stylesheets=[*self._logits_below.stylesheets, FLOW_CSS])
        # While a link's or a lesson's model loads, the plots drawn are another model's: faded
        # (STAGE_CSS), under the status column's note that names the model coming.
        self._stage = stage
        self.sources.param.watch(self._loading_changed, "loading")
        self._loading_changed()
        return [stage, self._logits_below, self._heads_below, self.analysis]

    def _loading_changed(self, *events) -> None:
        classes = [c for c in self._stage.css_classes if c != "lab-loading"]
        if self.sources.loading:
            classes.append("lab-loading")
        if classes != self._stage.css_classes:
            self._stage.css_classes = classes

    def sidebar(self):
        self._scenario_side = pn.Column(
            self.controls, self.more_settings, sizing_mode="stretch_width", margin=0
        )
        return [
            ControlNames(width=0, height=0, margin=0),
            self.pointer,
            self.source_picker,
            self._model_side,
            self._scenario_side,
        ]


def grow(view, css_class: str) -> None:
    """Let the Bokeh figures in a view fill the box the stage's stylesheet gives them."""
    for pane in view.select(pn.pane.Bokeh):
        pane.param.update(
            width=None, height=None, sizing_mode="stretch_both", css_classes=[css_class]
        )
        pane.object.update(
            width=None, height=None, frame_width=None, frame_height=None, sizing_mode="stretch_both"
        )


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
    lab.classroom.attach(template, lab.class_link)
    location = pn.state.location
    if location is not None:
        try:
            lab.url = UrlSync(
                lab.sources,
                location,
                ["source"],
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
