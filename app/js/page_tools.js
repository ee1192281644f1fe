// PageTools (app/page/a11y.py): the page's skip link and the presenter-mode switch, as the
// ReactiveHTML scripts Panel runs (`data` is the component's parameters, `state` its own
// scratch object, `toggle_btn` its button). "render" defines the helpers, keeps them in
// `state` for the other scripts, folds the sidebar on narrow windows and moves it after the
// main area in the document, so Tab reaches the lesson first.
// @script render
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
// The skip link, the page's first element, so the first Tab reaches it: among the header's
// tools it came after the sidebar button, the title and Teach a class (assets/lab.css styles it).
function skipFirst() {
  if (document.getElementById('lab-skip-first')) return;
  const link = document.createElement('a');
  link.id = 'lab-skip-first';
  link.href = '#main';
  link.textContent = data.skip_text;
  link.addEventListener('click', event => { event.preventDefault(); focusLesson(0); });
  document.body.prepend(link);
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
      el.textContent.trim() === data.lessons_tab, [])[0];
    if (tab && tries === 0) tab.click();
    if (tries < 20) setTimeout(() => focusLesson(tries + 1), 150);
    return;
  }
  const target = deep(lesson.shadowRoot || lesson, el =>
    ['BUTTON', 'INPUT', 'SELECT', 'A'].includes(el.tagName) && !el.disabled &&
    el.tabIndex >= 0 && el.getClientRects().length > 0, [])[0];
  if (target) { target.focus(); target.scrollIntoView({block: 'nearest'}); }
}
state.applyPresenter = applyPresenter; state.focusLesson = focusLesson;
// The keyboard help as a modal dialog: it opens under the header with focus on it, and while
// it is open the rest of the page is inert (no Tab, click or screen reader reaches the lesson
// behind it), Tab and Shift+Tab go round its own controls, and Esc closes it wherever focus
// is; closed, focus goes back to the button that opened it. Out of the header the first time:
// its stacking context put a phone's open sidebar on top (and `inert` goes on body's children).
function KeysDialog(panel, opener) {
  const madeInert = [];
  const controls = () => Array.from(panel.querySelectorAll('button, a[href], input, select'))
    .filter(el => !el.disabled);
  function onKey(event) {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'Tab') {
      const items = controls();
      const active = document.activeElement;
      const at = items.indexOf(active);
      const next = event.shiftKey ? (at <= 0 ? items.length - 1 : at - 1)
        : (at < 0 || at === items.length - 1 ? 0 : at + 1);
      event.preventDefault();
      (items[next] || panel).focus();
    }
  }
  function onFocusIn(event) {
    if (!panel.contains(event.target)) panel.focus();  // a click or a script moved it out
  }
  function open() {
    if (panel.parentNode !== document.body) document.body.appendChild(panel);
    for (const el of document.body.children) {
      if (el !== panel && !el.inert) { el.inert = true; madeInert.push(el); }
    }
    panel.hidden = false;
    opener.setAttribute('aria-expanded', 'true');
    document.addEventListener('keydown', onKey, true);
    document.addEventListener('focusin', onFocusIn, true);
    panel.focus();
  }
  function close() {
    document.removeEventListener('keydown', onKey, true);
    document.removeEventListener('focusin', onFocusIn, true);
    for (const el of madeInert.splice(0)) el.inert = false;
    panel.hidden = true;
    opener.setAttribute('aria-expanded', 'false');
    opener.focus();
  }
  return {panel, open, close, toggle: () => (panel.hidden ? open() : close())};
}
state.KeysDialog = KeysDialog;
// A press held before the drag (most people press, then move; a finger nearly always) became
// BokehJS's "press" gesture after 300 ms, and the drag that followed moved nothing. No tool of
// the lab uses press, so its threshold goes past any hold: a held press that moves is a drag.
try {
  Bokeh.require('core/ui_gestures').UIGestures.press_threshold = 2 ** 31 - 1;  // setTimeout's max
} catch (e) { /* another BokehJS: its gestures stay as they are */ }
// Every renderer rewrites its own <style> at every paint, mostly with the text it already
// holds; each write makes the browser recompute the plot's styles, again and again within one
// paint (BokehJS reads computed styles between renderers). An unchanged text is not written:
// a drag of a key costs half the browser's CPU (docs/patches.md, "In the browser").
try {
  const sheet = Bokeh.require('core/dom').InlineStyleSheet.prototype;
  if (!sheet._labSkipsSameText) {
    const write = sheet._update;
    sheet._update = function (css) { if (this.el.textContent !== css) write.call(this, css); };
    sheet._labSkipsSameText = true;
  }
} catch (e) { /* another BokehJS: its stylesheets are written as it writes them */ }
// A title's new text is only repainted (TitleView: `request_paint`), its plot not laid out
// again: the toolbar that shares the title's row kept the place the first, longer title left
// it, and its "⋮" was drawn beside the plane, over the next plane or the lesson's Previous
// (docs/patches.md). A text after the first makes the plot lay itself out again.
try {
  const title = Bokeh.require('models/annotations/title').TitleView.prototype;
  if (!title._labRelaysOut) {
    const init = title._init_text;
    title._init_text = async function () {
      const again = this._text_view != null;  // the first text is laid out with the plot
      await init.call(this);
      if (again && this.plot_view != null) this.plot_view.invalidate_layout();
    };
    title._labRelaysOut = true;
  }
} catch (e) { /* another BokehJS: a title's text is laid out as it lays it out */ }
// A laptop too: at 1366x768 the sidebar left the planes 321 px and pushed Measure below the
// fold; folded, the question, planes, weights and lesson share the screen (the menu button
// brings the settings back, and a lesson step points at the one it needs).
if (window.innerWidth < 1400) foldSidebar();
applyPresenter(data.presenter);
lessonFirst();
skipFirst();
// @script presenter
state.applyPresenter(data.presenter);
// @script toggle
data.presenter = !data.presenter;
// @script keys
// The keyboard help is a modal dialog (KeysDialog in render): Keys and Close toggle it.
if (!state.keysDialog || state.keysDialog.panel !== keys_panel) {
  state.keysDialog = state.KeysDialog(keys_panel, keys_btn);
}
state.keysDialog.toggle();
// @script send_echo
// The session's echo (PageTools.echo, app/page/a11y.py): the page (or a browser test, through
// the model) asks when the server has handled everything sent before by raising `echo` and
// waiting for `echoed` to reach it. This assignment is also what makes Panel send `echo`.
data.echo = Math.max(data.echo, data.echoed) + 1;
