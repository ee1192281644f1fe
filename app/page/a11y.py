"""Accessible names for the controls a screen reader would otherwise announce as "checkbox" or
"slider".

Bokeh draws a checkbox as an input beside (not inside) its label, a slider handle without the
slider's title, and a number box's spin buttons with no name at all, all in shadow roots; an
editable slider keeps its name in a text element beside its number box. This invisible
component walks the page's shadow roots now and then and copies each visible label onto its
control as `aria-label` (spin buttons become "Increase ..." and "Decrease ...").
"""

from __future__ import annotations

import param
from panel.reactive import ReactiveHTML

_LABEL_SCRIPT = r"""
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
    if (el.shadowRoot) nameControls(el.shadowRoot);
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
nameControls(document);
if (!window.__labA11y) {
  window.__labA11y = setInterval(() => nameControls(document), 1500);
}
"""


class ControlNames(ReactiveHTML):
    """Renders nothing visible; its script names the page's checkboxes and sliders."""

    _template = '<div id="a11y" aria-hidden="true" style="display:none"></div>'
    _scripts = {"render": _LABEL_SCRIPT}  # noqa: RUF012 - Panel reads this class attribute


# The page's first Tab stop is the skip link; it opens the Lessons tab if another one is open
# and puts focus on the lesson's first enabled button. Phones and narrow windows start with the
# sidebar folded (it would cover the page); presenter mode folds it too and enlarges the type
# (assets/lab.css reads the class on <html>).
_TOOLS_SCRIPT = r"""
function deep(root, test, out) {
  for (const el of root.querySelectorAll('*')) {
    if (test(el)) out.push(el);
    if (el.shadowRoot) deep(el.shadowRoot, test, out);
  }
  return out;
}
function foldSidebar() {
  const sidebar = document.getElementById('sidebar');
  const toggle = document.getElementById('sidebar-toggle');
  if (sidebar && sidebar.classList.contains('show')) {
    sidebar.classList.remove('show');
    if (toggle) toggle.setAttribute('aria-expanded', 'false');
  }
}
// The sidebar moves after the main area in the document (assets/lab.css keeps it on the left):
// Tab and a screen reader reach the lesson first, then the plots, then the 40 settings.
function lessonFirst() {
  const content = document.getElementById('content');
  const sidebar = document.getElementById('sidebar');
  const main = document.getElementById('main');
  if (content && sidebar && main && sidebar.compareDocumentPosition(main) & 4) {
    content.appendChild(sidebar);
  }
}
function applyPresenter(on) {
  document.documentElement.classList.toggle('lab-presenter', on);
  toggle_btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  if (on) foldSidebar();
}
function focusLesson(tries) {
  const lesson = deep(document, el => el.classList && el.classList.contains('lab-lessons'), [])[0];
  if (!lesson) {
    const tab = deep(document, el => el.classList && el.classList.contains('bk-tab') &&
      el.textContent.trim() === 'Lessons', [])[0];
    if (tab && tries === 0) tab.click();
    if (tries < 20) setTimeout(() => focusLesson(tries + 1), 150);
    return;
  }
  const target = deep(lesson.shadowRoot || lesson, el =>
    ['BUTTON', 'INPUT', 'SELECT', 'A'].includes(el.tagName) && !el.disabled &&
    el.tabIndex >= 0 && el.getClientRects().length > 0, [])[0];
  if (target) { target.focus(); target.scrollIntoView({block: 'nearest'}); }
}
"""


class PageTools(ReactiveHTML):
    """Header tools: a skip link to the lesson and the presenter-mode switch."""

    presenter = param.Boolean(default=False, doc="Larger type, sidebar folded (?presenter=1)")

    _template = (
        '<nav class="lab-tools" aria-label="Page tools">'
        '<button id="skip_link" type="button" class="lab-skip" onclick="${script(\'skip\')}">'
        "Skip to the lesson</button>"
        '<button id="toggle_btn" type="button" class="lab-presenter-toggle" aria-pressed="false" '
        "onclick=\"${script('toggle')}\">Presenter mode</button>"
        "</nav>"
    )
    _scripts = {  # noqa: RUF012 - Panel reads this class attribute
        "render": _TOOLS_SCRIPT
        + "state.applyPresenter = applyPresenter; state.focusLesson = focusLesson;\n"
        + "if (window.innerWidth < 900) foldSidebar();\napplyPresenter(data.presenter);\n"
        + "lessonFirst();",
        "presenter": "state.applyPresenter(data.presenter);",
        "toggle": "data.presenter = !data.presenter;",
        "skip": "state.focusLesson(0);",
    }
    _stylesheets = [  # noqa: RUF012
        ".lab-tools { display: flex; gap: 12px; align-items: center; }"
        # Off screen until it has focus (the usual skip-link pattern), then plainly visible.
        ".lab-skip { position: absolute; left: -10000px; top: 8px; padding: 6px 12px;"
        " background: #fff; color: #0b3d5c; font: inherit; font-weight: 700; border: 0;"
        " border-radius: 4px; z-index: 10; }"
        ".lab-skip:focus { position: static; }"
        ".lab-presenter-toggle { font: inherit; font-size: var(--lab-text, 16px);"
        " color: #fff; background: transparent; border: 2px solid #fff; border-radius: 6px;"
        " padding: 4px 12px; cursor: pointer; }"
        ".lab-presenter-toggle[aria-pressed=true] { background: #fff; color: #0b3d5c; }"
        ":focus-visible { outline: 3px solid #ffd166 !important; outline-offset: 2px; }"
        # Nobody presents from a phone; the header has no room to spare there.
        "@media (max-width: 600px) { .lab-presenter-toggle { display: none; } }"
    ]
