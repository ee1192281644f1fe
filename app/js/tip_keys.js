// TipKeys (app/views/tip_keys.py): the planes' tips by keyboard, as the ReactiveHTML scripts
// Panel runs (`data` is the component's parameters, `state` its scratch object, `row` the
// element that holds one focusable tip per query and key). Each tip is a slider for a screen
// reader ("movable tip"): the arrow keys move it a step, Shift+arrow five steps; Left/Right
// move a key along x and Up/Down along y, and every arrow turns the query (Right and Up
// anticlockwise). The browser may send only the last of several quick changes of a property,
// so each press sends the sum of every step this page has taken on that tip,
// "kind:index:sum_x:sum_y"; the server moves the tip by what the sum added since the last it
// saw, from where the tip is now. The tips arrive percent-encoded as JSON and are drawn in
// place: a tip keeps its element, and its focus, while it moves.
// @script render
const STEPS = {ArrowRight: [1, 0], ArrowLeft: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1]};
state.sums = {};
row.addEventListener('keydown', event => {
  const tip = event.target.closest('[data-tip]');
  const step = STEPS[event.key];
  if (!tip || !step) return;
  event.preventDefault();
  const times = event.shiftKey ? 5 : 1;
  let [dx, dy] = step;
  if (tip.dataset.kind === 'query') { dx = dx + dy; dy = 0; }  // one turn per press
  const key = tip.dataset.kind + ':' + tip.dataset.index;
  const sum = state.sums[key] || [0, 0];
  state.sums[key] = [sum[0] + dx * times, sum[1] + dy * times];
  data.move = [key, state.sums[key][0], state.sums[key][1]].join(':');
});
self.encoded_tips();
// @script encoded_tips
const tips = JSON.parse(decodeURIComponent(data.encoded_tips) || '[]');
const shown = Array.from(row.querySelectorAll('[data-tip]'));
if (shown.length !== tips.length || shown.some((el, i) => el.dataset.tip !== tips[i].name)) {
  row.textContent = '';
  for (const tip of tips) {
    const el = document.createElement('div');
    el.dataset.tip = tip.name;
    el.className = 'lab-tip';
    el.tabIndex = 0;
    el.setAttribute('role', 'slider');
    el.setAttribute('aria-roledescription', 'movable tip');
    el.setAttribute('aria-describedby', help.id);
    row.appendChild(el);
  }
}
Array.from(row.querySelectorAll('[data-tip]')).forEach((el, i) => {
  const tip = tips[i];
  el.dataset.kind = tip.kind;
  el.dataset.index = String(tip.index);
  el.setAttribute('aria-label', tip.label);
  el.setAttribute('aria-valuenow', String(tip.now));
  el.setAttribute('aria-valuemin', String(tip.min));
  el.setAttribute('aria-valuemax', String(tip.max));
  el.setAttribute('aria-valuetext', tip.text);
  el.textContent = tip.shown;
});
