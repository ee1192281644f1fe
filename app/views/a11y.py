"""Accessible names for the controls a screen reader would otherwise announce as "checkbox" or
"slider".

Bokeh draws a checkbox as an input beside (not inside) its label, a slider handle without the
slider's title, and a number box's spin buttons with no name at all, all in shadow roots; an
editable slider keeps its name in a text element beside its number box. This invisible
component walks the page's shadow roots now and then and copies each visible label onto its
control as `aria-label` (spin buttons become "Increase ..." and "Decrease ...").
"""

from __future__ import annotations

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
