// The live drag preview's arithmetic: the route of the last snapshot's configuration with one
// tip moved, as the server's NumPy engine would compute it (app/state/lab_state.py, through
// GeometryView._flush). Pure: numbers in, numbers out, no Bokeh and no page.
//
// app/views/preview.py puts this file in front of preview.js in one CustomJS body, which calls
// previewPipeline() once per window; tests/js/pipeline.test.js loads the same text in Node and
// holds it to fixtures the engine writes (tests/js/pipeline_fixtures.py).
//
// P: the snapshot's settings, one number each (GeometryView._update_preview's preview_params):
//   n_pairs, qx, qy (the query as drawn), scale (1/sqrt(d_k) or 1), temperature, null_on (0/1),
//   null_logit (the null candidate's logit), coord_limit, normalise (0/1), angle, angle_lo,
//   angle_hi (the query angle and its bounds, degrees), base_qx, base_qy (the scenario's query
//   before it is turned).
// R: one entry per candidate, pairs first then distractors (the `preview` rows): kx, ky (a
//   pair's key as drawn; a distractor's along and across the query), vx, vy, hidden (the part
//   of each score from the d_k - 2 hidden dimensions, which no drag moves), legal (0/1: not
//   masked, not hidden by the causal order).
// move: {kind: "key" | "value" | "query", index, x, y}, the dragged tip's position.
function previewPipeline() {
  const round = (x, digits) => {
    const f = 10 ** digits;
    return Math.round(x * f) / f;
  };
  // The weights chart's percentage notes (engine/snapshot.py share_percent).
  const pct = (x) => {
    const p = 100 * x;
    if (p <= 0 || p >= 100) return `${p.toFixed(0)}%`;
    if (p < 0.1) return "under 0.1%";
    if (p > 99.9) return "over 99.9%";
    return p >= 1 && p < 99 ? `${p.toFixed(0)}%` : `${p.toFixed(1)}%`;
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
  // The route with one tip moved, or null where the server refuses the move.
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
  // Each contribution's length |w v| and its share of all of them (the weights chart).
  const contributionShares = (r) => {
    const n = r.weights.length;
    const norms = new Float64Array(n), shares = new Float64Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) {
      norms[i] = Math.hypot(r.contributions_x[i], r.contributions_y[i]);
      total += norms[i];
    }
    for (let i = 0; i < n; i++) shares[i] = total > 0 ? norms[i] / total : 0;
    return {norms, shares};
  };
  // The route's entropy at each temperature in `temps`, the rest of the route as it is (the
  // entropy chart's curve).
  const entropySweep = (P, r, temps) => {
    const base = [];  // logits at temperature 1 (legal candidates and the null one)
    for (let i = 0; i < r.logits.length; i++) if (Number.isFinite(r.logits[i])) base.push(r.logits[i] * P.temperature);
    if (P.null_on) base.push(P.null_logit * P.temperature);
    const top = Math.max(...base);
    const entropy = new Float64Array(temps.length);
    for (let t = 0; t < temps.length; t++) {
      let z = 0, s = 0;
      for (const b of base) { const e = Math.exp((b - top) / temps[t]); z += e; s += e * (b - top) / temps[t]; }
      entropy[t] = Math.log(z) - s / z;  // -sum w log w with w = e / z
    }
    return entropy;
  };
  return {round, pct, median, queryAngle, compute, contributionShares, entropySweep};
}
