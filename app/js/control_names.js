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
const GROUP_TAG = 'lab_group_name';
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
  nameGroups();
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
    valueText(handle);
  }
}
// The Bokeh view drawn into `host`, or null.
function viewOf(host) {
  for (const root of Bokeh.index.roots) {
    const view = root.owner.query_one(v => v.el === host);
    if (view) return view;
  }
  return null;
}
// noUiSlider reads a handle's value out as the slider's own number, which on the log-scale
// sliders is an exponent (τ = 0.96 read "-0.02", d_k = 8 read "3.00"): each handle reads the
// value as the slider's title shows it. noUiSlider rewrites aria-valuetext on every update, so
// this follows its update event (bound after its own, so it runs last; binding fires it once).
function valueText(handle) {
  const target = handle.closest('.noUi-target');
  if (!target || !target.noUiSlider || target.dataset.labText) return;
  const view = viewOf(handle.getRootNode().host);
  if (!view || typeof view.pretty !== 'function') return;
  target.dataset.labText = '1';
  const handles = target.querySelectorAll('.noUi-handle');
  // aria-valuenow at full precision too: noUiSlider rounds it (the log sliders' to one decimal),
  // and a screen reader speaks a move only when that number changes (Orca 43 said nothing for
  // most steps of the temperature).
  target.noUiSlider.on('update.labText', (values, i, numbers) => {
    if (!handles[i]) return;
    handles[i].setAttribute('aria-valuetext', String(view.pretty(numbers[i])));
    handles[i].setAttribute('aria-valuenow', String(numbers[i]));
  });
}
// Choices.js, open, broke two ARIA rules (axe, critical): its combobox did not say which list it
// controls, and it set aria-expanded on the dropdown's plain div, where it means nothing (the
// combobox carries it). Once per Choices instance (Bokeh makes a new one when it redraws).
function fixChoices(root, input) {
  const view = root.host ? viewOf(root.host) : null;
  const inst = view ? view.choice_el : null;
  if (!inst || !inst.dropdown || !inst.containerOuter) return;
  input.dataset.labAria = '1';
  const list = inst.dropdown.element.querySelector('[role=listbox]');
  if (list) {
    // A long list scrolls, and Chromium makes a scroller a Tab stop: Tab from the box went to
    // the open list, which the box's blur then hid, dropping focus on <body>; the next Tab came
    // back to the box (a trap). The box's arrow keys move through the list; it needs no stop.
    list.tabIndex = -1;
    if (!list.id) list.id = `lab-choices-${Math.random().toString(36).slice(2)}`;
    inst.containerOuter.element.setAttribute('aria-controls', list.id);
  }
  for (const verb of ['show', 'hide']) {
    const original = inst.dropdown[verb];
    inst.dropdown[verb] = function (...args) {
      const out = original.apply(this, args);
      this.element.removeAttribute('aria-expanded');
      return out;
    };
  }
  inst.dropdown.element.removeAttribute('aria-expanded');
}
// A group of radio buttons is named after its question, which the server puts in the
// group's tags (app/views/group_name.py): Bokeh draws the group with no name of its own.
function nameGroups() {
  const doc = Bokeh.documents[0];
  for (const model of doc ? doc.all_models : []) {
    const tag = (model.tags || []).find(t => t != null && typeof t === 'object' &&
      ((t instanceof Map && t.has(GROUP_TAG)) || GROUP_TAG in t));
    if (!tag) continue;
    const name = tag instanceof Map ? tag.get(GROUP_TAG) : tag[GROUP_TAG];
    for (const root of Bokeh.index.roots) {
      const view = root.owner.find_one(model);
      const group = view && view.shadow_el ? view.shadow_el.querySelector('.bk-input-group') : null;
      if (!group) continue;
      if (group.getAttribute('role') !== 'radiogroup') group.setAttribute('role', 'radiogroup');
      setName(group, name);
    }
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
  // A multi-choice box (Choices.js) names its search input after its placeholder, which the
  // lab leaves empty: a screen reader said "null". Its title names it instead, and names the
  // box around it too, Choices' combobox, which Chromium's tree showed with no name at all.
  const choices = root.querySelector('input.choices__input--cloned');
  if (label && choices && label.textContent.trim()) {
    setName(choices, label.textContent.trim());
    const box = root.querySelector('div.choices');
    if (box) setName(box, label.textContent.trim());
  }
  if (choices && !choices.dataset.labAria) fixChoices(root, choices);
  // Choices.js marks each chosen chip aria-selected, which a div without a role may not carry
  // (axe: critical aria-allowed-attr, seen with a head ablated); the chip's text says it all.
  for (const chip of root.querySelectorAll('.choices__item')) {
    if (chip.getAttribute('aria-selected') != null && !chip.getAttribute('role')) {
      chip.removeAttribute('aria-selected');
    }
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
