"""The parts of a lab page built after the first screen, each the first time it is needed.

`Lab` (app/page/lab_page.py) registers these builders in its registry of parts; each takes the
lab it belongs to (or just what it needs of it) and returns the part, styled like the first
screen's figures. Most visits never build most of them: the analysis plots wait until scrolled
to, "More settings" until opened, the trained model's views until a model is opened.
"""

from __future__ import annotations

import panel as pn

from app.page.deferred import Deferred
from app.page.layout import FLOW_CSS
from app.state.lab_state import listed_backends
from app.views.controls import CandidateControls
from app.views.headings import group_heading

# The analysis plots below the first screen, built together when first scrolled to.
ANALYSIS = ("entropy", "dimension", "jacobian")


def analysis(lab):
    """The entropy, Jacobian and d_k views, styled and drawn like the first screen's."""
    entropy, dimension, jacobian = (lab.parts.get(name) for name in ANALYSIS)
    lab.style.add([entropy.figure, dimension.spread, dimension.entropy, jacobian.figure])
    # The live drag previews the entropy too, now that its sources exist.
    lab.preview.args = {
        **lab.preview.args,
        "entropy_sweep": entropy.source,
        "entropy_now": entropy.current,
    }
    snap = lab.sources.snapshot
    if snap is not None:
        lab.parts.draw(snap, only=ANALYSIS)
    rows = [pn.Row(entropy, jacobian), dimension.__panel__()]
    for row in rows:
        row.param.update(sizing_mode="stretch_width", stylesheets=[*row.stylesheets, FLOW_CSS])
    texts = (entropy.text, jacobian.text, dimension.text)  # the plots in words, out of sight
    return pn.Column(*rows, *texts, sizing_mode="stretch_width", margin=0)


def candidates(state, tr) -> CandidateControls:
    backends = listed_backends()  # never imports torch: see app.state.lab_state.listed_backends
    return CandidateControls(
        state,
        backend_notes={b.name: ("" if b.available else b.reason) for b in backends},
        unchecked=tuple(b.name for b in backends if not b.checked),
        tr=tr,
    )


def more_settings(lab):
    """What "More settings" opens: the candidates and engine, then the key/value pairs (the
    swap and reverse the lessons name, and each pair's inputs behind their own button)."""
    title = group_heading("Key / value pairs")
    built = [lab.parts.get(name) for name in ("candidates", "pairs", "pair_rows_section")]
    parts = (built[0], title, *built[1:])
    return pn.Column(*parts, sizing_mode="stretch_width", margin=0)


def model_panel(lab):
    """The trained model's sidebar controls; a model opened offers its first lesson step."""
    from app.views.model_panel import ModelPanel

    panel = ModelPanel(lab.sources.model, tr=lab.tr, link_warning=lab.status.link_warning)
    lab.style.add([panel.loss.figure])
    lab.sources.model.param.watch(lab.offer_model_lesson, ["model", "loading"])
    return panel


def model_main(lab):
    """The model's answer (in the logits' place) and its experiments."""
    from app.views.model_panel import ModelMainView

    main = ModelMainView(lab.sources.model, tr=lab.tr)
    lab.style.add([main.prediction.figure])
    return main


def causal_state(lab):
    from app.state.causal_state import CausalState

    return CausalState(lab.sources.model)  # its results come back through the model's hand-over


def receipt_state(lab):
    from app.state.receipt_state import ReceiptState

    return ReceiptState(lab.sources.model)


def receipt_view(lab):
    from app.views.receipt_view import ReceiptView

    get = lab.parts.get
    view = ReceiptView(get("receipt_state"), get("causal_state"), lab.sources.model, tr=lab.tr)
    lab.style.add([view.grid_figure, view.receipt_figure])
    return view


def causal_view(lab):
    from app.views.causal_view import CausalView

    get = lab.parts.get
    view = CausalView(get("causal_state"), lab.sources.model, get("receipt_state"), tr=lab.tr)
    lab.style.add([view.figure, view.patch_figure])
    return view


def every_head(lab) -> Deferred:
    """The placeholder below the first screen that builds the head grid when scrolled to."""
    _ = lab.tr.gettext
    return Deferred(
        lambda: lab.parts.get("head_grid"),
        # TRANSLATORS: the placeholder of the head grid, below a trained model's first screen.
        title=_("Every head at once, and the open head's whole pattern"),
        note=_("Drawn when you scroll here."),
        button=_("Draw them now"),
    )


def head_grid(lab):
    from app.views.head_grid import HeadGridView

    grid = HeadGridView(lab.sources.model, tr=lab.tr)
    lab.style.add(grid.figures(), share=False)
    # Drawn as the page draws it: held back while a lesson step asks about it.
    lab.parts.draw_one("head_grid", grid, lab.sources.snapshot)
    return grid
