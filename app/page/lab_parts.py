"""What a lab page is made of: every part registered by name, with how it is built, drawn,
held back by a lesson step and released (app/page/parts.py).

The first screen is built at once (`eager`); everything else the first time it is needed, by
the builders of app/page/later_parts.py. Each part that can show what a lesson step asks about
has a conceal beside its draw: while the step holds it back, until Measure, it is drawn
neutral (app/page/held.py).
"""

from __future__ import annotations

from functools import partial

from app.i18n.markers import N_
from app.page import held
from app.page import later_parts as later
from app.page.deferred import Deferred, Disclosure
from app.page.step_follower import MORE_SETTINGS
from app.state.scene_tables import first_screen
from app.state.sources import MODEL
from app.views.analysis import AuditView, DiagnosisView
from app.views.controls import CandidateControls, ControlsPanel
from app.views.dimension_sweep import DimensionView
from app.views.entropy import EntropyView
from app.views.export_panel import ExportView
from app.views.geometry import GeometryView
from app.views.jacobian import JacobianView
from app.views.logits import LogitsView
from app.views.pair_rows import PairRows
from app.views.pairs import PairsEditor
from app.views.plot_text import PlotText
from app.views.status import StatusView
from app.views.tip_keys import TipKeys
from app.views.weights import WeightsView
from engine.scenarios import SCENARIOS

SCENE_LABEL = N_("The plots above in words")
PAIR_ROWS = N_("Each pair's key, value and mask")


def update(view, snap) -> None:
    view.update(snap)


def draw_dimension(view, snap) -> None:
    view.update(snap, snap.d_k)


def show_scene(view, snap) -> None:
    view.show(first_screen(snap))


def draw_geometry(sources, view, snap, *, route: bool = True) -> None:
    # A trained head's vectors are projections: no tip to drag.
    view.update(snap, snap.n_pairs, draggable=sources.source != MODEL, route=route)


def draw_model_view(sources, view, snap) -> None:
    if sources.source == MODEL:
        view.update()


def register_first_screen(lab) -> None:
    """The question, the planes, the weights and logits, their words, and the sidebar's
    scenario controls: built now, in drawing order."""
    add, state, sources = lab.parts.add, lab.state, lab.sources
    geometry = partial(draw_geometry, sources)
    add(
        "status",
        lambda: StatusView(sources, tr=lab.tr),
        draw=update,
        conceal=held.headline,
        eager=True,
    )
    add(
        "geometry",
        lambda: GeometryView(state, tr=lab.tr),
        draw=geometry,
        conceal=held.planes(geometry),
        eager=True,
    )
    register_model_views(lab)
    route = held.WEIGHTS
    for name, view, title in (
        ("logits", LogitsView, "Logits"),
        ("weights", WeightsView, "Weights"),
    ):
        built = partial(view, tr=lab.tr)
        add(name, built, draw=update, conceal=held.covering(route, title, update), eager=True)
    # The first screen's plots in words, for a screen reader (app/views/plot_text.py).
    add(
        "scene",
        lambda: PlotText(lab.tr.gettext(SCENE_LABEL), tr=lab.tr),
        draw=show_scene,
        conceal=held.plots_in_words(show_scene),
        eager=True,
    )
    register_analysis(lab)
    titles = {name: sc.title for name, sc in SCENARIOS.items()}
    add("controls", lambda: ControlsPanel(state, scenario_titles=titles, tr=lab.tr), eager=True)
    # The planes' tips by keyboard, the drag's equivalent (app/views/tip_keys.py).
    add(
        "tip_keys",
        lambda: TipKeys(state, tr=lab.tr, sizing_mode="stretch_width", margin=(4, 10)),
        draw=update,
        eager=True,
    )
    register_more_settings(lab)


def register_model_views(lab) -> None:
    """A trained model's views: built when the page first opens a model, drawn while shown."""
    add, sources = lab.parts.add, lab.sources
    shown = partial(draw_model_view, sources)
    note = held.found_head_note(lambda: sources.source == MODEL)
    add(
        "model_panel",
        partial(later.model_panel, lab),
        draw=lambda view, snap: note(view, snap, frozenset()),
        conceal=note,
    )
    model_shown = lambda: sources.source == MODEL  # noqa: E731 - read at each draw
    add(
        "model_main",
        partial(later.model_main, lab),
        draw=shown,
        conceal=held.model_answer(model_shown, shown),
    )
    # A closed page's maps and receipt stop: nothing is delivered to it.
    add("causal_state", partial(later.causal_state, lab), release=lambda state: state.close())
    add("receipt_state", partial(later.receipt_state, lab), release=lambda state: state.close())
    for name in ("causal_view", "receipt_view", "every_head"):
        add(name, partial(getattr(later, name), lab))
    add(
        "head_grid",
        partial(later.head_grid, lab),
        draw=shown,
        conceal=held.every_head(model_shown, shown),
    )


def register_analysis(lab) -> None:
    """The analysis plots below the first screen, built when first scrolled to (see
    app/page/deferred.py): most visits never see them."""
    add, route, _ = lab.parts.add, held.WEIGHTS, lab.tr.gettext
    add(
        "entropy",
        partial(EntropyView, tr=lab.tr),
        draw=update,
        conceal=held.covering(route, "Entropy", update),
    )
    add(
        "dimension",
        partial(DimensionView, tr=lab.tr),
        draw=draw_dimension,
        conceal=held.covering(route, "Entropy against d_k", draw_dimension),
    )
    add(
        "jacobian",
        partial(JacobianView, tr=lab.tr),
        draw=update,
        conceal=held.covering(route, "Jacobian", update),
    )
    add(
        "analysis",
        lambda: Deferred(
            partial(later.analysis, lab),
            # TRANSLATORS: the placeholder of the three analysis plots, below the first screen.
            title=_("Entropy, softmax Jacobian and d_k"),
            note=_("These three plots are drawn when you scroll here."),
            # TRANSLATORS: the placeholder's button, for a keyboard or a screen reader.
            button=_("Draw them now"),
        ),
        eager=True,
    )


def register_more_settings(lab) -> None:
    """The candidates, engine and key/value pairs behind "More settings", built when first
    opened: folded away on a phone anyway, and costly to build for every page of a class."""
    add, parts, state = lab.parts.add, lab.parts, lab.state
    add("candidates", partial(later.candidates, state, lab.tr), release=CandidateControls.release)
    add("pairs", lambda: PairsEditor(state, tr=lab.tr))
    add(
        "more_settings",
        lambda: Disclosure(partial(later.more_settings, lab), label=lab.tr.gettext(MORE_SETTINGS)),
        eager=True,
    )
    # Each pair's inputs (five widgets a pair) inside it, behind their own button: no lesson
    # step names them, so a class following its teacher never builds them.
    add("pair_rows", lambda: PairRows(state, tr=lab.tr))
    add(
        "pair_rows_section",
        lambda: Disclosure(partial(parts.get, "pair_rows"), label=lab.tr.gettext(PAIR_ROWS)),
    )


def register_teaching_tabs(lab) -> None:
    """The hand-made source's other teaching tabs, built the first time they are opened."""
    add, state = lab.parts.add, lab.state
    add("diagnosis", lambda: DiagnosisView(state, tr=lab.tr))
    add("audit", lambda: AuditView(state, tr=lab.tr))
    add("export", lambda: ExportView(state, tr=lab.tr))
