// PageStructure (app/page/a11y.py): the landmarks and names Panel's BootstrapTemplate leaves
// out, set once at render on the template's own elements (they are outside Bokeh's shadow
// roots and are never redrawn). Without them axe found a `list` (the sidebar is a <ul> whose
// children are Panel roots, not <li>), an unnamed dialog (the join panel's modal), no `main`
// landmark and no level-one heading. The sidebar becomes a named complementary landmark, so a
// screen reader can jump to the settings, and everything inside it lies in a landmark.
// Placeholders: SIDEBAR_NAME, DIALOG_NAME. A ReactiveHTML "render" script.
function landmarks(doc, names) {
  const set = (el, attrs) => {
    if (!el) return;
    for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  };
  set(doc.getElementById('main'), {role: 'main'});
  set(doc.getElementById('sidebar'), {role: 'complementary', 'aria-label': names.sidebar});
  // The list is only the template's wrapper: with no list role its roots need no <li>.
  set(doc.querySelector('#sidebar > ul'), {role: 'none'});
  set(doc.querySelector('#header .app-header'), {role: 'heading', 'aria-level': '1'});
  set(doc.getElementById('pn-Modal'), {'aria-label': names.dialog});
}
// The names in the page's language where the page gives them (English: the placeholders').
const given = typeof data === 'undefined' ? {} : data;
landmarks(document, {
  sidebar: given.sidebar_name || __SIDEBAR_NAME__,
  dialog: given.dialog_name || __DIALOG_NAME__,
});
