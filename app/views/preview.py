"""Live drag: the browser previews a dragged tip at display rate, the server stays the authority.

Bokeh's PointDrawTool moves a handle in the browser but sends it to the server only at pan end
(see /work/shared/NOTES.md section 8). One CustomJS, on both planes' pan events, recomputes in
the browser, from what the last snapshot sent (the `preview` rows and `preview_params`), the
exact route of the dragged configuration: scores (the part in the plane plus each key's fixed
hidden part from the d_k lift), scale, temperature, mask, null candidate, softmax, weights,
contributions, output and entropy, and writes them into the sources the plots draw, in place
(in-place edits and `change.emit()` redraw without sending anything to the server). At most
every THROTTLE_MS while dragging, and on release, it sends the tip to the server, whose NumPy
engine computes the authoritative snapshot that overwrites the preview. The tips are numbered:
a snapshot drawn before the server took the last one (its `synced` setting, tip_drag.py) is
older than the pointer, after the release too, and the preview goes back on top of it.

`compute` mirrors the server's pipeline (app/state/lab_state.py, GeometryView._flush): a key or value
lands at its position rounded to 4 decimals; a query drag turns the scenario's query to the new
angle (rounded to 0.01 degree, wrapped into the angle bounds) and the distractor cloud with it;
"normalise" makes the query and keys unit length in the plane, which leaves the hidden parts
alone (they are drawn after normalisation).

The script is app/js/pipeline.js (`compute` and the rest of the arithmetic, pure) followed by
app/js/preview.js (pointer events and in-place drawing). tests/js/ runs pipeline.js in Node
against fixtures the engine writes, and tests/browser/test_live_drag.py runs the page's own
copy in Chromium against the engine.
"""

from __future__ import annotations

from bokeh.models import CustomJS

from app import js

THROTTLE_MS = 250

# One CustomJS body: the arithmetic first (it defines previewPipeline()), then the drag handling
# and drawing that call it. Node runs the first file alone (tests/js/pipeline.test.js).
PREVIEW_JS = js.source("pipeline.js") + "\n" + js.source("preview.js")


def attach_preview(geometry, weights_view, logits_view, entropy_view=None) -> CustomJS:
    """Wire the preview into one session's planes and charts (a new CustomJS per session)."""
    callback = CustomJS(
        name="lab_preview",
        args={
            "addr": geometry.address_fig,
            "pay": geometry.payload_fig,
            "rows": geometry.preview,
            "params": geometry.preview_params,
            "geometry": geometry.geometry,
            "contributions": geometry.contributions,
            "distractors": geometry.distractors,
            "key_tips": geometry.key_tips,
            "value_tips": geometry.value_tips,
            "query_tip": geometry.query_tip,
            "weights": weights_view.source,
            "weights_extra": weights_view.extra,
            "logits": logits_view.source,
            "entropy_sweep": getattr(entropy_view, "source", None),
            "entropy_now": getattr(entropy_view, "current", None),
            "throttle_ms": THROTTLE_MS,
        },
        code=PREVIEW_JS,
    )
    for fig in (geometry.address_fig, geometry.payload_fig):
        for event in ("panstart", "pan", "panend"):
            fig.js_on_event(event, callback)
    geometry.preview_params.js_on_change("data", callback)
    return callback
