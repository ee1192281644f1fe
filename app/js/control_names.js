// ControlNames (app/page/a11y.py): names the page's controls for screen readers. Bokeh draws a
// checkbox as an input beside its label, a slider handle without the slider's title and a
// number box's spin buttons with no name, all in shadow roots; this walks them and copies each
// visible label onto its control as aria-label. It also gives sliders PageUp and PageDown steps
// and takes plot toolbars out of the Tab order. A ReactiveHTML "render" script.
// The walk runs once at render, then only when the page changes: one MutationObserver watches
// the document and every shadow root the walk finds (a shadow root's changes do not reach the
// document's observer). Changes are gathered: the walk runs QUIET_MS after the last one, or
// MAX_WAIT_MS after the first while they keep coming, and never sooner than MIN_GAP_MS after
// the walk before. The walk only sets attributes, which the observer does not watch.
const QUIET_MS = 200;
const MAX_WAIT_MS = 1000;
const MIN_GAP_MS = 1000;
const OBSERVED = {childList: true, subtree: true, characterData: true};
const walks = window.__labA11y = window.__labA11y ||
  {observer: null, watched: new WeakSet(), timer: null, since: 0, last: -Infinity};
function observe(root) {
  if (walks.observer == null || walks.watched.has(root)) return;
  walks.watched.add(root);
  walks.observer.observe(root, OBSERVED);
}
function walk() {
  clearTimeout(walks.timer);
  walks.timer = null;
  walks.last = Date.now();
  nameControls(document);
}
function changed() {
  const now = Date.now();
  if (walks.timer == null) walks.since = now;
  else clearTimeout(walks.timer);
  const due = Math.max(Math.min(now + QUIET_MS, walks.since + MAX_WAIT_MS), walks.last + MIN_GAP_MS);
  walks.timer = setTimeout(walk, Math.max(0, due - now));
}
function textOf(root) {
  return Array.from(root.children)
    .filter(c => !['STYLE', 'LINK'].includes(c.tagName))
    .map(c => c.textContent).join(' ').trim();
}
function setName(el, name) {
  if (el.getAttribute('aria-label') !== name) el.setAttribute('aria-label', name);
}
function nameSpinner(root, name) {
  const input = root.querySelector('input');
  if (input) setName(input, name);
  for (const button of root.querySelectorAll('button.bk-spin-btn')) {
    const verb = button.classList.contains('bk-spin-btn-up') ? 'Increase' : 'Decrease';
    setName(button, `${verb} ${name}`);
    // The box itself takes the arrow keys; its two buttons are for the mouse, and as Tab
    // stops they tripled the way to the lesson.
    if (button.tabIndex !== -1) button.tabIndex = -1;
  }
}
function nameHandles(root, name) {
  for (const handle of root.querySelectorAll('.noUi-handle')) {
    setName(handle, name);
    coarseKeys(handle);
  }
}
// PageUp/PageDown move a slider by a 24th of its range (15 degrees on the query angle).
function sliderModel(handle) {
  const host = handle.getRootNode().host;
  for (const model of Bokeh.documents[0].all_models) {
    if (!('start' in model && 'end' in model && 'step' in model && 'value' in model)) continue;
    for (const root of Bokeh.index.roots) {
      const view = root.owner.find_one(model);
      if (view && view.el === host) return model;
    }
  }
  return null;
}
function coarseKeys(handle) {
  if (handle.dataset.labCoarse) return;
  handle.dataset.labCoarse = '1';
  handle.addEventListener('keydown', event => {
    if (event.key !== 'PageUp' && event.key !== 'PageDown') return;
    const model = sliderModel(handle);
    if (!model || model.disabled) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const step = model.step || 1;
    const coarse = Math.max(step, Math.round((model.end - model.start) / 24 / step) * step);
    const sign = event.key === 'PageUp' ? 1 : -1;
    const next = Math.min(model.end, Math.max(model.start, model.value + sign * coarse));
    const value = Math.round(next / step) * step;
    model.setv({value: value, value_throttled: value});
  }, true);
}
// Each pair's row: its checkbox reads "A: takes part"; its four boxes become "A key x" etc.
function namePair(host) {
  const boxes = [];
  let pair = '';
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches('input[type=checkbox]')) {
        const text = textOf(el.parentNode);
        const cut = text.lastIndexOf(':');
        pair = (cut > 0 ? text.slice(0, cut) : text).trim();
      }
      if (el.shadowRoot) {
        if (el.shadowRoot.querySelector('button.bk-spin-btn')) boxes.push(el.shadowRoot);
        else walk(el.shadowRoot);
      }
    }
  })(host.shadowRoot);
  if (!pair) return;
  for (const box of boxes) {
    const label = box.querySelector('label');
    const field = label ? label.textContent.trim() : '';
    const input = box.querySelector('input');
    if (input) input.dataset.labPair = '1';
    nameSpinner(box, `${pair} ${field}`.trim());
  }
}
function nameControls(root) {
  for (const el of root.querySelectorAll('*')) {
    if (!el.shadowRoot) continue;
    observe(el.shadowRoot);
    nameControls(el.shadowRoot);
  }
  for (const input of root.querySelectorAll('input[type=checkbox], input[type=radio]')) {
    if (!input.parentNode) continue;
    const text = Array.from(input.parentNode.children).find(c =>
      c !== input && !['STYLE', 'LINK', 'INPUT'].includes(c.tagName) && c.textContent.trim());
    if (text) setName(input, text.textContent.trim());
  }
  // An editable slider shows its name in a separate text element beside its number box, and
  // its slider below has no title: give both (and the box's spin buttons) that name.
  for (const box of root.querySelectorAll('.slider-edit')) {
    const beside = box.previousElementSibling;
    if (!box.shadowRoot || !beside || !beside.shadowRoot) continue;
    const name = textOf(beside.shadowRoot).replace(/:\s*$/, '');
    if (!name) continue;
    nameSpinner(box.shadowRoot, name);
    const row = box.getRootNode().host;
    const column = row && row.getRootNode().host;
    for (const part of column && column.shadowRoot ? column.shadowRoot.children : []) {
      if (part.shadowRoot && part.shadowRoot.querySelector('.noUi-handle')) {
        nameHandles(part.shadowRoot, name);
      }
    }
  }
  for (const pair of root.querySelectorAll('.lab-pair')) namePair(pair);
  // Other number boxes carry a visible label in their own shadow root.
  const label = root.querySelector('label');
  const own = root.querySelector('input');
  if (label && root.querySelector('button.bk-spin-btn') && label.textContent.trim() &&
      !(own && own.dataset.labPair)) {
    nameSpinner(root, label.textContent.trim());
  }
  // A text box (a class code, a nickname) names itself after its own label.
  const text = root.querySelector('input.bk-input[type=text]');
  if (label && text && !text.dataset.labPair && label.textContent.trim()) {
    setName(text, label.textContent.trim());
  }
  const title = root.querySelector('.bk-slider-title');
  const titleText = title ? title.textContent.split(':')[0].trim() : '';
  if (titleText) nameHandles(root, titleText);
  // Plot toolbars and canvases are for the mouse (every value has a control in the sidebar):
  // out of the Tab order, they took 8 stops per plot on the way to the lesson.
  for (const el of root.querySelectorAll(
    '.bk-OnOffButton, .bk-ClickButton, .bk-tool-overflow, .bk-layer.bk-events')) {
    if (el.tabIndex !== -1) el.tabIndex = -1;
  }
}
if (walks.observer == null) {
  walks.observer = new MutationObserver(changed);
  observe(document);
}
walk();
