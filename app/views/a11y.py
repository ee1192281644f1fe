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
function nameSpinner(root, name) {
  const input = root.querySelector('input');
  if (input && !input.hasAttribute('aria-label')) input.setAttribute('aria-label', name);
  for (const button of root.querySelectorAll('button.bk-spin-btn')) {
    const verb = button.classList.contains('bk-spin-btn-up') ? 'Increase' : 'Decrease';
    if (button.getAttribute('aria-label') !== `${verb} ${name}`) {
      button.setAttribute('aria-label', `${verb} ${name}`);
    }
  }
}
function nameHandles(root, name) {
  for (const handle of root.querySelectorAll('.noUi-handle')) {
    if (handle.getAttribute('aria-label') !== name) handle.setAttribute('aria-label', name);
  }
}
function nameControls(root) {
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) nameControls(el.shadowRoot);
  }
  for (const input of root.querySelectorAll('input[type=checkbox], input[type=radio]')) {
    if (input.hasAttribute('aria-label') || !input.parentNode) continue;
    const text = Array.from(input.parentNode.children).find(c =>
      c !== input && !['STYLE', 'LINK', 'INPUT'].includes(c.tagName) && c.textContent.trim());
    if (text) input.setAttribute('aria-label', text.textContent.trim());
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
    const slider = row && row.nextElementSibling;
    if (slider && slider.shadowRoot) nameHandles(slider.shadowRoot, name);
  }
  // Other number boxes carry a visible label in their own shadow root.
  const label = root.querySelector('label');
  if (label && root.querySelector('button.bk-spin-btn') && label.textContent.trim()) {
    nameSpinner(root, label.textContent.trim());
  }
  const title = root.querySelector('.bk-slider-title');
  if (title) nameHandles(root, title.textContent.split(':')[0].trim());
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
        + "if (window.innerWidth < 900) foldSidebar();\napplyPresenter(data.presenter);",
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
