"""Live drag: the browser previews a dragged tip at display rate, the server stays the authority.

Bokeh's PointDrawTool moves a handle in the browser but sends it to the server only at pan end
(see /work/shared/NOTES.md section 8). One CustomJS, on both planes' pan events, recomputes in
the browser, from what the last snapshot sent (the `preview` rows and `preview_params`), the
exact route of the dragged configuration: scores (the part in the plane plus each key's fixed
hidden part from the d_k lift), scale, temperature, mask, null candidate, softmax, weights,
contributions, output and entropy, and writes them into the sources the plots draw, in place
(in-place edits and `change.emit()` redraw without sending anything to the server). At most
every THROTTLE_MS while dragging, and on release, it sends the tip to the server, whose NumPy
engine computes the authoritative snapshot that overwrites the preview.

`compute` mirrors the server's pipeline (app/state/lab_state.py, GeometryView._flush): a key or value
lands at its position rounded to 4 decimals; a query drag turns the scenario's query to the new
angle (rounded to 0.01 degree, wrapped into the angle bounds) and the distractor cloud with it;
"normalise" makes the query and keys unit length in the plane, which leaves the hidden parts
alone (they are drawn after normalisation). tests/browser/test_live_drag.py runs this very
function in Chromium against the engine on random configurations.
"""

from __future__ import annotations

from bokeh.models import CustomJS

THROTTLE_MS = 250

PREVIEW_JS = r"""
const LAB = (window.__attentionLabPreview ??= (() => {
  const col = (src, name) => (src.data instanceof Map ? src.data.get(name) : src.data[name]);
  const round = (x, digits) => { const f = 10 ** digits; return Math.round(x * f) / f; };
  const pct = (x) => {
    const p = 100 * x;
    if (p <= 0 || p >= 100) return `${p.toFixed(0)}%`;
    if (p < 0.1) return "under 0.1%";
    if (p > 99.9) return "over 99.9%";
    return p >= 1 && p < 99 ? `${p.toFixed(0)}%` : `${p.toFixed(1)}%`;
  };
  const read = (params, rows) => {
    const P = {};
    for (const name of params.columns()) P[name] = col(params, name)[0];
    const R = {};
    for (const name of ["kx", "ky", "vx", "vy", "hidden", "legal"]) R[name] = col(rows, name);
    return [P, R];
  };
  const median = (xs, ys, m) => {
    const lengths = [];
    for (let i = 0; i < m; i++) lengths.push(Math.sqrt(xs[i] * xs[i] + ys[i] * ys[i]));
    lengths.sort((p, q) => p - q);
    const h = Math.floor(m / 2);
    return m % 2 ? lengths[h] : (lengths[h - 1] + lengths[h]) / 2;
  };
  // The angle the server sets for a query dragged to (x, y) (GeometryView._flush).
  const queryAngle = (P, x, y) => {
    const current = Math.atan2(P.qy, P.qx);
    let a = P.angle + (Math.atan2(y, x) - current) * (180 / Math.PI);
    const span = P.angle_hi - P.angle_lo;
    if (span > 0) a = ((((a - P.angle_lo) % span) + span) % span) + P.angle_lo;
    return round(a, 2);
  };
  // The route of the last snapshot's configuration with one tip moved: {kind, index, x, y}.
  const compute = (P, R, move) => {
    const n = R.kx.length, m = P.n_pairs;
    const kx = Float64Array.from(R.kx), ky = Float64Array.from(R.ky);
    const vx = Float64Array.from(R.vx), vy = Float64Array.from(R.vy);
    let qx = P.qx, qy = P.qy, angle = P.angle;
    if (move.kind === "query") {
      if (Math.hypot(move.x, move.y) >= 1e-9) {
        angle = queryAngle(P, move.x, move.y);
        const t = angle * (Math.PI / 180), c = Math.cos(t), s = Math.sin(t);
        qx = c * P.base_qx - s * P.base_qy;
        qy = s * P.base_qx + c * P.base_qy;
        if (P.normalise) { const r = Math.hypot(qx, qy); qx /= r; qy /= r; }
      }
    } else {
      const i = move.index;
      if (!(i >= 0 && i < m)) return null;
      let x = round(move.x, 4), y = round(move.y, 4);
      if (Math.abs(x) > P.coord_limit || Math.abs(y) > P.coord_limit) return null;
      if (move.kind === "key") {
        if (P.normalise) {
          const r = Math.hypot(x, y);
          if (r === 0) return null;  // the server refuses a zero key with normalise on
          x /= r; y /= r;
        }
        kx[i] = x; ky[i] = y;
      } else {
        // Distractor values are sized by the median length of the pairs' values.
        const before = median(vx, vy, m);
        vx[i] = x; vy[i] = y;
        const after = median(vx, vy, m);
        if (before > 0) {
          for (let j = m; j < n; j++) { vx[j] = (vx[j] / before) * after; vy[j] = (vy[j] / before) * after; }
        }
      }
    }
    // Distractors come in the query's frame (along q, across q): the cloud turns with it.
    const qn = Math.hypot(qx, qy), ux = qn > 0 ? qx / qn : 1, uy = qn > 0 ? qy / qn : 0;
    for (let i = m; i < n; i++) {
      const along = kx[i], across = ky[i];
      kx[i] = along * ux - across * uy;
      ky[i] = along * uy + across * ux;
    }
    const scores = new Float64Array(n), visible = new Float64Array(n);
    const scaled = new Float64Array(n), logits = new Float64Array(n);
    let top = P.null_on ? P.null_logit : -Infinity;
    for (let i = 0; i < n; i++) {
      visible[i] = qx * kx[i] + qy * ky[i];
      scores[i] = visible[i] + R.hidden[i];
      scaled[i] = scores[i] * P.scale;
      logits[i] = R.legal[i] ? scaled[i] / P.temperature : -Infinity;
      if (logits[i] > top) top = logits[i];
    }
    const weights = new Float64Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      weights[i] = R.legal[i] ? Math.exp(logits[i] - top) : 0;
      total += weights[i];
    }
    let nullWeight = P.null_on ? Math.exp(P.null_logit - top) : 0;
    total += nullWeight;
    let ox = 0, oy = 0, entropy = 0;
    const cx = new Float64Array(n), cy = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const w = (weights[i] /= total);
      cx[i] = w * vx[i]; cy[i] = w * vy[i];
      ox += cx[i]; oy += cy[i];
      if (w > 0) entropy -= w * Math.log(w);
    }
    nullWeight /= total;
    if (nullWeight > 0) entropy -= nullWeight * Math.log(nullWeight);
    return {
      angle, query: [qx, qy], keys_x: kx, keys_y: ky, values_x: vx, values_y: vy,
      scores, visible, scaled, logits, weights, null_weight: P.null_on ? nullWeight : null,
      contributions_x: cx, contributions_y: cy, output: [ox, oy], entropy,
      effective_keys: Math.exp(entropy),
    };
  };
  const headAngle = (x, y) => Math.atan2(y, x) - Math.PI / 2;
  const put = (src, name, i, value) => { const c = col(src, name); if (c != null) c[i] = value; };
  // Write a computed route into the sources the plots draw, in place: nothing goes to the
  // server, the plots redraw on change.emit().
  const draw = (a, P, r, move, handle) => {
    const n = r.weights.length, m = P.n_pairs;
    const g = a.geometry, gx = col(g, "x1");
    if (gx != null && gx.length === 1 + 2 * m) {
      const vec = [[r.query[0], r.query[1]]];
      for (let i = 0; i < m; i++) vec.push([r.keys_x[i], r.keys_y[i]]);
      for (let i = 0; i < m; i++) vec.push([r.values_x[i], r.values_y[i]]);
      vec.forEach(([x, y], i) => {
        put(g, "x1", i, x); put(g, "y1", i, y); put(g, "angle", i, headAngle(x, y));
      });
      g.change.emit();
    }
    const c = a.contributions, cx1 = col(c, "x1");
    if (cx1 != null && cx1.length === n + 1) {
      let sx = 0, sy = 0;
      for (let i = 0; i < n; i++) {
        const dx = r.contributions_x[i], dy = r.contributions_y[i];
        put(c, "x0", i, sx); put(c, "y0", i, sy);
        sx += dx; sy += dy;
        put(c, "x1", i, sx); put(c, "y1", i, sy);
        put(c, "cx", i, dx); put(c, "cy", i, dy);
        put(c, "norm", i, Math.hypot(dx, dy)); put(c, "weight", i, r.weights[i]);
        put(c, "angle", i, headAngle(dx, dy));
      }
      const [ox, oy] = r.output;
      put(c, "x1", n, ox); put(c, "y1", n, oy); put(c, "cx", n, ox); put(c, "cy", n, oy);
      put(c, "norm", n, Math.hypot(ox, oy)); put(c, "angle", n, headAngle(ox, oy));
      c.change.emit();
    }
    const d = a.distractors, dkx = col(d, "kx");
    if (dkx != null && dkx.length === n - m) {
      for (let i = m; i < n; i++) {
        put(d, "kx", i - m, r.keys_x[i]); put(d, "ky", i - m, r.keys_y[i]);
        put(d, "vx", i - m, r.values_x[i]); put(d, "vy", i - m, r.values_y[i]);
        put(d, "weight", i - m, r.weights[i]);
      }
      d.change.emit();
    }
    const w = a.weights, ww = col(w, "weight");
    const norms = [];
    let normTotal = 0;
    for (let i = 0; i < n; i++) {
      norms.push(Math.hypot(r.contributions_x[i], r.contributions_y[i]));
      normTotal += norms[i];
    }
    if (ww != null && ww.length === n) {
      const rowsOf = col(w, "row");
      let otherW = 0, otherS = 0, otherN = 0;
      for (let i = 0; i < n; i++) {
        const share = normTotal > 0 ? norms[i] / normTotal : 0;
        put(w, "weight", i, r.weights[i]); put(w, "contribution_norm", i, norms[i]);
        put(w, "norm_share", i, share);
        if (rowsOf != null && Number.isNaN(rowsOf[i])) {
          otherW += r.weights[i]; otherS += share; otherN += norms[i];
        }
      }
      w.change.emit();
      const e = a.weights_extra, kinds = col(e, "kind") || [];
      kinds.forEach((kind, j) => {
        const value = kind === "null" ? r.null_weight ?? 0 : otherW;
        put(e, "weight", j, value);
        put(e, "note", j, pct(value));
        if (kind === "others") { put(e, "norm_share", j, otherS); put(e, "contribution_norm", j, otherN); }
      });
      e.change.emit();
    }
    const l = a.logits, lraw = col(l, "raw");
    // A value moves no score: the logits chart need not repaint.
    if (move.kind !== "value" && lraw != null && lraw.length === n) {
      for (let i = 0; i < n; i++) {
        put(l, "raw", i, r.scores[i]); put(l, "visible", i, r.visible[i]);
        put(l, "scaled", i, r.scaled[i]); put(l, "logit", i, r.logits[i]);
        put(l, "logit_drawn", i, Number.isFinite(r.logits[i]) ? r.logits[i] : NaN);
      }
      l.change.emit();
    }
    // The entropy chart: the current point, and the whole curve over temperature while the
    // candidates are few enough for it to cost nothing (the server redraws it anyway).
    const now = a.entropy_now;
    if (now != null && (col(now, "entropy") || []).length === 1) {
      put(now, "entropy", 0, r.entropy); put(now, "effective_keys", 0, r.effective_keys);
      now.change.emit();
    }
    const sweep = a.entropy_sweep, temps = sweep == null ? null : col(sweep, "temperature");
    if (temps != null && n <= 1024) {
      const base = [];  // logits at temperature 1 (legal candidates and the null one)
      for (let i = 0; i < n; i++) if (Number.isFinite(r.logits[i])) base.push(r.logits[i] * P.temperature);
      if (P.null_on) base.push(P.null_logit * P.temperature);
      const top = Math.max(...base);
      for (let t = 0; t < temps.length; t++) {
        let z = 0, s = 0;
        for (const b of base) { const e = Math.exp((b - top) / temps[t]); z += e; s += e * (b - top) / temps[t]; }
        const h = Math.log(z) - s / z;  // -sum w log w with w = e / z
        put(sweep, "entropy", t, h); put(sweep, "effective_keys", t, Math.exp(h));
      }
      sweep.change.emit();
    }
    // The dragged handle sits where the server will draw it (rounded, unit with normalise,
    // on the query's ray for the query).
    if (move.kind === "query") {
      put(a.query_tip, "x", 0, P.qhandle * r.query[0]);
      put(a.query_tip, "y", 0, P.qhandle * r.query[1]);
      a.query_tip.change.emit();
    } else if (handle != null) {
      const src = move.kind === "key" ? a.key_tips : a.value_tips;
      const hx = move.kind === "key" ? r.keys_x[move.index] : r.values_x[move.index];
      const hy = move.kind === "key" ? r.keys_y[move.index] : r.values_y[move.index];
      put(src, "x", move.index, hx); put(src, "y", move.index, hy);
      src.change.emit();
    }
  };
  const drags = new Map();
  return { col, read, compute, draw, drags, queryAngle };
})());

const GRAB_PX = 24;
const a = {geometry, contributions, distractors, key_tips, value_tips, query_tip, weights,
           weights_extra, logits, entropy_sweep, entropy_now};
const key = params.id;
const name = cb_obj == null ? "" : (cb_obj.event_name ?? "");

if (name === "lab_compute") {  // tests and the benchmark: the page's own preview function
  const [P, R] = LAB.read(params, rows);
  const r = LAB.compute(P, R, cb_obj.move);
  if (r == null) return null;
  const plain = {};
  for (const [k, v] of Object.entries(r)) plain[k] = ArrayBuffer.isView(v) ? Array.from(v) : v;
  return plain;
}

const sync = (drag) => {
  const src = drag.kind === "key" ? key_tips : drag.kind === "value" ? value_tips : query_tip;
  src.setv({data: src.data}, {check_eq: false});  // one message to the server
  drag.synced = performance.now();
};

const apply = (drag) => {
  const [P, R] = LAB.read(params, rows);
  if (!P.enabled) return;
  const move = {kind: drag.kind, index: drag.index,
                x: drag.pointer[0] + drag.offset[0], y: drag.pointer[1] + drag.offset[1]};
  const t0 = performance.now();
  const r = LAB.compute(P, R, move);
  if (r == null) return;
  LAB.draw(a, P, r, move, drag);
  drag.frames += 1;
  // Read by tests and tools/bench_drag.py: frames previewed, and the last frames' cost in ms.
  window.__attentionLabFrames = (window.__attentionLabFrames ?? 0) + 1;
  const cost = (window.__attentionLabFrameMs ??= []);
  cost.push(performance.now() - t0);
  if (cost.length > 500) cost.shift();
};

if (cb_obj === params) {
  // A snapshot from the server arrived; during a drag it is older than the pointer, so the
  // preview goes back on top once the whole message has been applied.
  const drag = LAB.drags.get(key);
  if (drag != null && drag.active) setTimeout(() => { if (drag.active) apply(drag); }, 0);
  return;
}

if (name === "panstart") {
  const fig = cb_obj.origin;
  const onAddress = fig === addr;
  const tool = fig.toolbar.active_drag;
  if (tool == null || tool.type !== "PointDrawTool") { LAB.drags.delete(key); return; }  // panning
  const sources = onAddress ? [["query", query_tip], ["key", key_tips]] : [["value", value_tips]];
  const span = fig.x_range.end - fig.x_range.start;
  const px = span / Math.max(1, fig.inner_width || 300);  // data units per screen pixel
  // Where each handle was drawn: the tool may already have moved the selected ones by the
  // first pan step before this callback runs.
  const [P, R] = LAB.read(params, rows);
  const drawn = (kind, i) => kind === "query" ? [P.qhandle * P.qx, P.qhandle * P.qy]
    : kind === "key" ? [R.kx[i], R.ky[i]] : [R.vx[i], R.vy[i]];
  let best = null;
  for (const [kind, src] of sources) {
    for (const i of src.selected.indices) {
      const [x, y] = drawn(kind, i);
      const dist = Math.hypot(x - cb_obj.x, y - cb_obj.y) / px;
      // Only a handle under the pointer: a point left selected by an earlier tap is not one.
      if (dist <= GRAB_PX && (best == null || dist < best.dist - 0.5))
        best = {kind, index: i, dist, x, y};
    }
  }
  // One handle moves, never two that overlap: the tool selected every handle it hit.
  for (const [kind, src] of sources) {
    const keep = best != null && best.kind === kind ? [best.index] : [];
    if (src.selected.indices.length !== keep.length || (keep.length && src.selected.indices[0] !== keep[0]))
      src.selected.indices = keep;
  }
  if (best == null) { LAB.drags.delete(key); return; }
  LAB.drags.set(key, {active: true, kind: best.kind, index: best.index,
                      offset: [best.x - cb_obj.x, best.y - cb_obj.y], pointer: [cb_obj.x, cb_obj.y],
                      synced: performance.now(), frames: 0});
  return;
}

const drag = LAB.drags.get(key);
if (drag == null || !drag.active) return;
if (name === "pan") {
  drag.pointer = [cb_obj.x, cb_obj.y];
  // At most one preview per displayed frame, however fast the pointer events come.
  if (!drag.scheduled) {
    drag.scheduled = true;
    requestAnimationFrame(() => {
      drag.scheduled = false;
      if (!drag.active) return;
      apply(drag);
      if (performance.now() - drag.synced >= throttle_ms) sync(drag);
    });
  }
} else if (name === "panend") {
  drag.pointer = [cb_obj.x, cb_obj.y];
  drag.active = false;  // a frame still scheduled does nothing
  apply(drag);
  sync(drag);
}
"""


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
