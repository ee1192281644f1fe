"""Accessible names for the controls a screen reader would otherwise announce as "checkbox" or
"slider".

Bokeh draws a checkbox as an input beside (not inside) its label, and a slider handle without
the slider's title, both in shadow roots. This invisible component walks the page's shadow
roots now and then and copies each visible label onto its control as `aria-label`.
"""

from __future__ import annotations

from panel.reactive import ReactiveHTML

_LABEL_SCRIPT = """
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
  const title = root.querySelector('.bk-slider-title');
  if (title) {
    const name = title.textContent.split(':')[0].trim();
    for (const handle of root.querySelectorAll('.noUi-handle')) {
      if (handle.getAttribute('aria-label') !== name) handle.setAttribute('aria-label', name);
    }
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
