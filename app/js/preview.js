// The live drag preview, the CustomJS body that both planes' pan events and the preview
// settings' changes run (app/views/preview.py wires it and explains the design). It picks the
// handle under the pointer, previews the dragged configuration once per displayed frame by
// writing the route into the sources the plots draw, in place, and sends the tip to the server
// at most every throttle_ms and on release; the server's snapshot then overwrites the preview.
//
// app/js/pipeline.js comes first in the same body and defines previewPipeline(). The other
// names are the CustomJS args: addr, pay (the two figures), rows, params (the preview's inputs),
// the sources it writes, throttle_ms; and cb_obj, the event or the params source that changed.
const LAB = (window.__attentionLabPreview ??= (() => {
  const col = (src, name) => (src.data instanceof Map ? src.data.get(name) : src.data[name]);
  const read = (params, rows) => {
    const P = {};
    for (const name of params.columns()) P[name] = col(params, name)[0];
    const R = {};
    for (const name of ["kx", "ky", "vx", "vy", "hidden", "legal"]) R[name] = col(rows, name);
    return [P, R];
  };
  // The arithmetic (app/js/pipeline.js, in front of this file in the same CustomJS body).
  const {compute, contributionShares, entropySweep, pct, queryAngle} = previewPipeline();
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
    const {norms, shares} = contributionShares(r);
    if (ww != null && ww.length === n) {
      const rowsOf = col(w, "row");
      let otherW = 0, otherS = 0, otherN = 0;
      for (let i = 0; i < n; i++) {
        const share = shares[i];
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
      const curve = entropySweep(P, r, temps);
      for (let t = 0; t < temps.length; t++) {
        put(sweep, "entropy", t, curve[t]); put(sweep, "effective_keys", t, Math.exp(curve[t]));
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
  return { col, read, compute, draw, drags, queryAngle, sent: 0 };
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
  // Numbered, so the page knows which of its tips the server has drawn (params' `synced`).
  LAB.sent += 1;
  const number = new Array((LAB.col(src, "x") || []).length).fill(LAB.sent);
  if (src.data instanceof Map) src.data.set("sync", number); else src.data.sync = number;
  src.setv({data: src.data}, {check_eq: false});  // one message to the server
  drag.synced = performance.now();
  drag.sent = LAB.sent;
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
  // A snapshot from the server arrived. During a drag it is older than the pointer, so the
  // preview goes back on top once the whole message has been applied. After the release, a
  // snapshot of a tip synced mid-drag can still arrive before the release's own (a server
  // under load): it is older too, until the server has drawn the last tip the page sent.
  const drag = LAB.drags.get(key);
  if (drag == null) return;
  const drawn = (LAB.col(params, "synced") || [Infinity])[0];
  const older = drag.active || (drag.sent != null && drawn < drag.sent);
  if (older) setTimeout(() => { if (LAB.drags.get(key) === drag) apply(drag); }, 0);
  else drag.sent = null;  // the server has drawn the release: its drawing stands from now on
  return;
}

if (name === "panstart") {
  const fig = cb_obj.origin;
  const onAddress = fig === addr;
  const tool = fig.toolbar.active_drag;
  if (tool == null || tool.type !== "PointDrawTool") { LAB.drags.delete(key); return; }  // panning
  const sources = onAddress ? [["query", query_tip], ["key", key_tips]] : [["value", value_tips]];
  // Data units per screen pixel, across and down: one range, but the frame is not square.
  const px = (fig.x_range.end - fig.x_range.start) / Math.max(1, fig.inner_width || 300);
  const py = (fig.y_range.end - fig.y_range.start) / Math.max(1, fig.inner_height || 300);
  // Where each handle was drawn: the tool may already have moved the selected ones by the
  // first pan step before this callback runs.
  const [P, R] = LAB.read(params, rows);
  const drawn = (kind, i) => kind === "query" ? [P.qhandle * P.qx, P.qhandle * P.qy]
    : kind === "key" ? [R.kx[i], R.ky[i]] : [R.vx[i], R.vy[i]];
  let best = null;
  for (const [kind, src] of sources) {
    for (const i of src.selected.indices) {
      const [x, y] = drawn(kind, i);
      const dist = Math.hypot((x - cb_obj.x) / px, (y - cb_obj.y) / py);
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
