// TabKeys (app/page/a11y.py): the teaching tabs as real tabs. Bokeh draws Tabs' headers as
// focusable divs that only a click opens, with no roles: Enter, Space and the arrows did
// nothing and a screen reader heard no tabs. This gives the headers tablist/tab roles with
// aria-selected, the panels tabpanel roles, one Tab stop for the row (the open tab), and the
// keys of the WAI-ARIA tabs pattern: Left/Right (wrapping), Home and End open a tab and move
// focus to it, as Enter and Space open the focused one. The server rebuilds the headers when a
// tab first opens (Panel's dynamic tabs), so an observer of the header row puts the roles
// back and the focus on the open tab. A ReactiveHTML "render" script; `data.css_class` picks
// the Tabs, `data.label` names the tab list.
const RETRY_MS = 250;
const TRIES = 60;
// The tab a key opens from tab `i` of `n`, or null for a key the tabs leave alone.
function keyTarget(key, i, n) {
  switch (key) {
    case 'ArrowRight': return (i + 1) % n;
    case 'ArrowLeft': return (i - 1 + n) % n;
    case 'Home': return 0;
    case 'End': return n - 1;
    case 'Enter': case ' ': return i;
    default: return null;
  }
}
function setAttr(el, key, value) {
  if (el.getAttribute(key) !== value) el.setAttribute(key, value);
}
function decorate(view, label) {
  const tabs = view.header_els || [];
  if (tabs.length === 0 || !tabs[0].parentNode) return;
  setAttr(tabs[0].parentNode, 'role', 'tablist');
  setAttr(tabs[0].parentNode, 'aria-label', label);
  const base = `lab-tabs-${view.model.id}`;
  tabs.forEach((tab, i) => {
    const open = i === view.model.active;
    const id = `${base}-tab-${i}`;
    setAttr(tab, 'id', id);
    setAttr(tab, 'role', 'tab');
    setAttr(tab, 'aria-selected', open ? 'true' : 'false');
    if (tab.tabIndex !== (open ? 0 : -1)) tab.tabIndex = open ? 0 : -1;
    const panel = view.child_views[i] ? view.child_views[i].el : null;
    if (!panel) return;
    setAttr(panel, 'id', `${base}-panel-${i}`);
    setAttr(panel, 'role', 'tabpanel');
    setAttr(panel, 'aria-labelledby', id);
    setAttr(tab, 'aria-controls', `${base}-panel-${i}`);
  });
}
function attach(view, label) {
  if (view.__labTabKeys) return;
  view.__labTabKeys = {refocus: false};
  const own = view.__labTabKeys;
  view.el.addEventListener('keydown', event => {
    const tabs = view.header_els || [];
    const i = tabs.indexOf(event.composedPath()[0]);
    const next = i < 0 ? null : keyTarget(event.key, i, tabs.length);
    if (next == null) return;
    event.preventDefault();
    own.refocus = true;  // the server may rebuild the headers: focus follows the open tab
    view.change_active(next);
    decorate(view, label);
    tabs[next].focus();
  });
  // Attributes are not watched (decorate sets them); `class` is, as Bokeh marks the open tab.
  const update = () => {
    decorate(view, label);
    const tabs = view.header_els || [];
    const focused = view.el.shadowRoot ? view.el.shadowRoot.activeElement : null;
    if (own.refocus && !tabs.includes(focused) && tabs[view.model.active]) {
      tabs[view.model.active].focus();
    }
  };
  new MutationObserver(update).observe(view.shadow_el || view.el.shadowRoot,
    {childList: true, subtree: true, attributes: true, attributeFilter: ['class']});
  view.el.addEventListener('focusout', event => {
    // Focus left the tabs for good (not a header rebuilt under it): stop following.
    if (event.relatedTarget != null) own.refocus = false;
  });
  decorate(view, label);
}
function findTabs(cssClass) {
  const doc = Bokeh.documents[0];
  for (const model of doc ? doc.all_models : []) {
    if (!(model.css_classes || []).includes(cssClass) || !('active' in model)) continue;
    for (const root of Bokeh.index.roots) {
      const view = root.owner.find_one(model);
      if (view && view.header_els) return view;
    }
  }
  return null;
}
// The main area's roots may draw after this component's: look again for a while, and each
// time the document reports every root drawn (its idle signal), which a slow machine may reach
// only after the retries (attach runs once per view).
function start(tries) {
  const view = findTabs(data.css_class);
  if (view) attach(view, data.label);
  else if (tries > 0) setTimeout(() => start(tries - 1), RETRY_MS);
}
state.keyTarget = keyTarget;
start(TRIES);
const doc = Bokeh.documents[0];
if (doc && doc.idle && !doc.__labTabKeys) {
  doc.__labTabKeys = true;
  doc.idle.connect(() => start(0));
}
