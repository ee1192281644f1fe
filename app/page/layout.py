"""Where each part of a lab page sits: the sidebar, the first screen (the stage) and what lies
below it, for the hand-made scenarios or a trained model's head.

`PageLayout` only places views the `Lab` (app/page/lab_page.py) made or makes on demand: it
builds no view of its own, apart from the containers, the teaching tabs' holders and the source
picker. The stylesheets it reads say how the stage fits the screen (assets/components/).
"""

from __future__ import annotations

from functools import partial

import panel as pn
import param

import attention_lab_assets
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH
from app.page.a11y import DIALOG_NAME, SIDEBAR_NAME, ControlNames, PageStructure, TabKeys
from app.page.deferred import fill
from app.state.sources import MODEL, SourceSwitch
from app.state.sources import SCENARIOS as HAND_MADE

SOURCE_LABELS = {N_("Hand-made vectors"): HAND_MADE, N_("A trained model"): MODEL}
SOURCE_LABELS_BY_NAME = {name: label for label, name in SOURCE_LABELS.items()}

# The main area is a size container (assets/lab.css), so 100cqw/100cqh below are its width
# and height. Wide: question, planes and bars on the left, the teaching tabs in a column
# beside them, all inside the first screen; the planes are as large as both the width and the
# height allow. Narrower: the logits go below the fold. Phone: one column, lesson first.
STAGE_CSS = attention_lab_assets.read_text("components", "stage.css")
# Rows of plots under the first screen: two side by side when there is room, else stacked.
FLOW_CSS = attention_lab_assets.read_text("components", "plot-rows.css")
# Every head at once: its boxes take no minimum width from the grid (it scrolls in its own).
HEAD_GRID_CSS = attention_lab_assets.read_text("components", "head-grid.css")
# Each plane is a square of side --plane (set by the stage); side by side when both fit.
PLANES_CSS = attention_lab_assets.read_text("components", "planes.css")
SOURCE_PICKER_CSS = attention_lab_assets.read_text("components", "source-picker.css")

# The hand-made source's teaching tabs whose views are built when first opened: tab -> part.
# A tab is known by its English name (`open_tab`); the page shows it in the session's language.
TAB_PARTS = {
    N_("Why is it sharp?"): "diagnosis",
    N_("Audit"): "audit",
    N_("Share & export"): "export",
}
LESSONS, EXPERIMENTS, CAUSAL_MAP = N_("Lessons"), N_("Experiments"), N_("Causal map")
# The trained model's Causal map tab, top to bottom, built when first opened.
CAUSAL_PARTS = ("receipt_view", "causal_view")


def stage_pane(fig, css_class: str) -> pn.pane.Bokeh:
    """A figure in a pane that fills the box the stage's stylesheet gives it (`css_class`).

    The figure is given its final sizes and class first and the pane is made with them:
    changing a pane's sizes once made had Panel read every property of its figure back into
    the pane (Bokeh pane `_sync_properties`): about 6 ms of a page's build for four figures."""
    fig.update(
        width=None,
        height=None,
        frame_width=None,
        frame_height=None,
        sizing_mode="stretch_both",
        css_classes=[css_class],
    )
    return pn.pane.Bokeh(fig, sizing_mode="stretch_both", css_classes=[css_class])


def _tab(title, view=None):
    # Fills the teaching column; longer content scrolls inside its tab.
    return pn.Column(
        *([view] if view is not None else []),
        name=title,
        scroll=True,
        sizing_mode="stretch_both",
        min_height=0,
    )


class PageLayout(param.Parameterized):
    """The sidebar and main area of one lab page, and which source's views they show."""

    sources = param.ClassSelector(class_=SourceSwitch, constant=True)

    def __init__(self, parts, sources: SourceSwitch, doc, pointer, tr=ENGLISH, **params):
        """`parts`: the page's registry (app/page/parts.py), whose first-screen views this
        places; `pointer`: the sidebar's outline of a step's controls; `tr`: the session's
        translator (app/i18n/translator.py)."""
        super().__init__(sources=sources, **params)
        self._doc, self._parts, self._ = doc, parts, tr.gettext
        # Each teaching tab's English name, by its holder (the page shows the translation).
        self._tab_names: dict[int, str] = {}
        # The source picker's labels in the session's language, and back.
        self._source_labels = {self._(label): name for label, name in SOURCE_LABELS.items()}
        self._label_of = {name: label for label, name in self._source_labels.items()}
        view = parts.get
        self.sidebar = self._sidebar(view, pointer)
        self.teaching = self._teaching(view)
        self.stage = self._stage(view)
        self.logits_below.param.update(stylesheets=[*self.logits_below.stylesheets, FLOW_CSS])
        self.heads_below = pn.Column(
            visible=False, sizing_mode="stretch_width", margin=0, stylesheets=[HEAD_GRID_CSS]
        )
        self.main = [self.stage, self.logits_below, self.heads_below, view("analysis")]
        self.source_picker.param.watch(self._pick_source, "value")
        self.loading_changed()

    def _sidebar(self, view, pointer) -> list:
        """The sidebar: the scenario's controls, or the trained model's (built on first use)."""
        self.source_picker = pn.widgets.RadioButtonGroup(
            label=self._("What the lab shows"),
            options=list(self._source_labels),
            value=self._label_of[HAND_MADE],
            color="primary",
            variant="outline",
            sizing_mode="stretch_width",
            margin=(10, 10, 4, 10),
            stylesheets=[SOURCE_PICKER_CSS],  # its buttons wrap when both do not fit
        )
        self.model_side = pn.Column(visible=False, sizing_mode="stretch_width")
        self.scenario_side = pn.Column(
            *map(view, ("controls", "tip_keys", "more_settings")),
            sizing_mode="stretch_width",
            margin=0,
        )
        # One root for the template, not one per part: Panel renders each root of a template
        # under a snapshot and restore of its whole configuration (`config.set`), a cost per
        # root that a page pays at every build (docs/performance.md).
        return [
            pn.Column(
                ControlNames(width=0, height=0, margin=0),
                PageStructure(
                    sidebar_name=self._(SIDEBAR_NAME),
                    dialog_name=self._(DIALOG_NAME),
                    width=0,
                    height=0,
                    margin=0,
                ),
                TabKeys(
                    css_class="lab-teaching", label=self._("Teaching"), width=0, height=0, margin=0
                ),
                pointer,
                self.source_picker,
                self.model_side,
                self.scenario_side,
                sizing_mode="stretch_width",
                margin=0,
            )
        ]

    def _teaching(self, view) -> pn.Tabs:
        """The teaching column: the lessons, then the source's own tabs, each built when
        opened."""
        lessons = self._named_tab(
            LESSONS,
            pn.Column(view("classroom"), view("lessons"), sizing_mode="stretch_width", margin=0),
        )
        self.scenario_tabs = [lessons, *(self._named_tab(name) for name in TAB_PARTS)]
        # The hand-made diagnosis, audit and export describe the scenarios, not a model's head:
        # a trained model has its own tabs, built with its views (`place_model_views`).
        self.experiments_tab = self.causal_tab = self.model_tabs = None
        teaching = pn.Tabs(
            *self.scenario_tabs,
            # Only the open tab's widgets exist in the page; the others are built when opened.
            dynamic=True,
            sizing_mode="stretch_both",
            css_classes=["lab-teaching"],
        )
        teaching.param.watch(self._open_tab, "active")
        return teaching

    def _stage(self, view) -> pn.Column:
        """The first screen: the question, both planes, the weights and the logits, and the
        teaching tabs beside them."""
        geometry = view("geometry")
        planes = pn.Row(
            stage_pane(geometry.address_fig, "lab-plane"),
            stage_pane(geometry.payload_fig, "lab-plane"),
            css_classes=["lab-geometry", "lab-planes"],
            stylesheets=[PLANES_CSS],
        )
        weights = stage_pane(view("weights").figure, "lab-weights")
        self.logits = stage_pane(view("logits").figure, "lab-logits")
        # With a trained model open, its answer takes the logits' cell and the logits move
        # below the first screen (the answer's view is built on first use).
        self.prediction = self.prediction_text = None
        self.logits_cell = pn.Column(
            self.logits, sizing_mode="stretch_both", css_classes=["lab-logits"], margin=0
        )
        self.logits_below = pn.Column(visible=False, sizing_mode="stretch_width", height=360)
        # One grid: the question, both planes and the weights fit the first screen (the
        # stylesheet places them by the width of the main area; see STAGE_CSS).
        return pn.Column(
            view("status"),
            planes,
            weights,
            self.logits_cell,
            view("scene"),  # the plots in words, out of sight (app/views/plot_text.py)
            self.teaching,
            sizing_mode="stretch_both",  # its height comes from STAGE_CSS
            css_classes=["lab-stage"],
            stylesheets=[STAGE_CSS],
        )

    @param.depends("sources.loading", watch=True)
    def loading_changed(self) -> None:
        """While a link's or a lesson's model loads, the plots drawn are another model's: faded
        (STAGE_CSS), under the status column's note that names the model coming."""
        classes = [c for c in self.stage.css_classes if c != "lab-loading"]
        if self.sources.loading:
            classes.append("lab-loading")
        if classes != self.stage.css_classes:
            self.stage.css_classes = classes
        # The plots in words describe the same other model's run: out of a screen reader's
        # reach until the model coming has drawn (it read "the model answers 5000" meanwhile).
        shown = not self.sources.loading
        for text in (self._parts.get("scene"), self.prediction_text):
            if text is not None and text.pane.visible != shown:
                text.pane.visible = shown

    def _pick_source(self, event) -> None:
        source = self._source_labels.get(event.new)
        if source is None or source == self.sources.source:
            return
        with pn.io.hold(self._doc):
            self.sources.source = source

    def place_model_views(self, panel, main, heads) -> None:
        """The trained model's controls, answer, experiments and every head; the causal tab's
        views wait until it is first opened."""
        self.model_side.objects = [panel]
        self.prediction = stage_pane(main.prediction.figure, "lab-logits")
        self.prediction_text = main.prediction.text  # the answer in words, out of sight
        self.experiments_tab = pn.Column(main, name=self._(EXPERIMENTS))
        self.causal_tab = pn.Column(name=self._(CAUSAL_MAP))
        self.model_tabs = [
            self.scenario_tabs[0],  # the lessons
            self._named_tab(EXPERIMENTS, self.experiments_tab),
            self._named_tab(CAUSAL_MAP, self.causal_tab),
        ]
        self.heads_below.objects = [heads]
        self.loading_changed()  # the answer's words hide while a model loads, as the rest

    def show_source(self, model: bool) -> None:
        """Show the hand-made source's views and tabs, or (`model`) the trained model's."""
        self.source_picker.value = self._label_of[self.sources.source]
        self.scenario_side.visible = not model
        self.model_side.visible = model
        # The model's answer takes the logits' place in the first screen; the logits move below.
        first, below = (
            ([self.prediction, self.prediction_text], [self.logits])
            if model
            else ([self.logits], [])
        )
        if list(self.logits_cell.objects) != first:
            self.logits_below.objects = []
            self.logits_cell.objects = first
            self.logits_below.objects = below
        self.logits_below.visible = model
        self.heads_below.visible = model
        wanted = self.model_tabs if model else self.scenario_tabs
        if list(self.teaching.objects) != wanted:
            self.teaching.objects = wanted
            self.teaching.active = 0

    def _named_tab(self, name: str, view=None):
        """A teaching tab titled in the session's language, known by its English `name`."""
        holder = _tab(self._(name), view)
        self._tab_names[id(holder)] = name
        return holder

    def tab_name(self, holder) -> str:
        """A teaching tab's English name (its title is the session's language's)."""
        return self._tab_names.get(id(holder), holder.name)

    def open_tab(self, name: str) -> None:
        """Show a teaching tab by its English name (building its view the first time)."""
        names = [self.tab_name(tab) for tab in self.teaching.objects]
        self.teaching.active = names.index(name)

    def _open_tab(self, event) -> None:
        """Build a teaching tab's view when it is first opened: most visits never open them, and
        they were a seventh of a page's memory."""
        tabs = self.teaching.objects
        if not 0 <= event.new < len(tabs):
            return
        holder = tabs[event.new]
        if self.tab_name(holder) == CAUSAL_MAP:
            if not self.causal_tab.objects:
                # The fast estimate and its receipt above the exact maps: built here, as the
                # other tabs' views are, not with the model (a third of opening one).
                fill(self.causal_tab, *(partial(self._parts.get, name) for name in CAUSAL_PARTS))
            # The estimate is made for a student who looks at it, then for each new sentence.
            self._parts.get("receipt_state").following = True
            return
        name = TAB_PARTS.get(self.tab_name(holder))
        if name is None or self._parts.built(name) is not None:
            return
        fill(holder, lambda: self._parts.get(name))
