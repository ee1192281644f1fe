// ControlPointer (app/page/a11y.py): when a lesson step opens, the sidebar controls it names
// are scrolled into view and outlined for a few seconds, and the live region `said` tells a
// screen reader where they are. `data.names` are the step's control names (their page labels),
// `data.nonce` changes on every step opened. A control behind "More settings" is drawn a
// moment after the step opens, so the search is tried again for a few seconds.
// `data.shown` changes after every Measure: the verdict (the `.lab-lesson-result` pane, drawn
// under the Measure button) is scrolled into view; on a laptop it appeared below the fold.
// @script render
const HIGHLIGHT_MS = 3000;
// What the pointer says, in the page's language where the page gives `data.words`
// (app/page/step_follower.py POINTER_WORDS, translated), else in English; {names} is the list.
const WORDS = {
  cue: '☰ Open the sidebar for {names}',
  folded: 'In the sidebar (open it with the menu button), the controls this step uses: {names}.',
  highlighted: 'Highlighted in the sidebar, the controls this step uses: {names}.',
};
function words(key, names) {
  const given = data.words && data.words[key];
  return (given || WORDS[key]).replace('{names}', names);
}
const TRIES = 25;
const TRY_MS = 150;
// A label names the control when it is the name, or the name then a note, a colon or a value
// ("Query position (causal hides keys after it)", "Temperature τ (log scale): 1.00"), in the
// page's language: the names come translated (app/page/step_follower.py), and a Chinese label's
// note opens with a full-width bracket ("温度 τ（对数刻度）").
function labelMatches(text, name) {
  const t = (text || '').replace(/\s+/g, ' ').trim();
  if (!name || !t.startsWith(name)) return false;
  const rest = t.slice(name.length);
  return rest === '' || /^[\s:(（：]/.test(rest);
}
function deep(root, test, out) {
  for (const el of root.querySelectorAll('*')) {
    if (test(el)) out.push(el);
    if (el.shadowRoot) deep(el.shadowRoot, test, out);
  }
  return out;
}
// The text that labels a control: a slider's title, a label, a button's own text without
// what it hides from a screen reader (a disclosure button's arrow: in a class a step names
// "More settings" itself).
function labelOf(el) {
  if (el.classList && el.classList.contains('bk-slider-title')) return el.textContent;
  if (el.tagName === 'LABEL') return el.textContent;
  if (el.tagName !== 'BUTTON') return null;
  return Array.from(el.childNodes)
    .filter(node => !(node.getAttribute && node.getAttribute('aria-hidden') === 'true'))
    .map(node => node.textContent).join('');
}
// The component (the shadow host) each named control is drawn in, or null, name by name.
function findControls(root, names) {
  return names.map(name => {
    const hit = deep(root, el => labelMatches(labelOf(el), name) && el.getClientRects().length > 0,
      [])[0];
    return hit ? hit.getRootNode().host : null;
  });
}
function outline(host) {
  const before = host.style.cssText;
  host.style.outline = '4px solid #e69f00';
  host.style.outlineOffset = '2px';
  host.style.borderRadius = '6px';
  host.style.backgroundColor = '#fff4d6';
  setTimeout(() => { host.style.cssText = before; }, HIGHLIGHT_MS);
}
// A line in the header beside the menu button while the sidebar is folded, naming the controls
// of this step that it holds: outlining the menu button alone told a class nothing (a laptop,
// a projector in presenter mode). Hidden from screen readers: `said` tells them the same.
function cue(names) {
  const header = document.getElementById('header');
  if (!header) return;
  let note = document.getElementById('lab-sidebar-cue');
  if (!note) {
    note = document.createElement('div');
    note.id = 'lab-sidebar-cue';
    note.className = 'lab-sidebar-cue';
    note.setAttribute('aria-hidden', 'true');
    header.appendChild(note);
  }
  note.hidden = names.length === 0;
  note.textContent = names.length ? words('cue', names.join(', ')) : '';
  note.title = note.textContent;
}
// The step's names that the sidebar holds (drawn or not: folded, nothing in it is drawn).
function inSidebar(sidebar, names) {
  return names.filter(name => deep(sidebar, el => labelMatches(labelOf(el), name), []).length > 0);
}
// The controls a model's panel or "More settings" draws may come a moment after the step.
function cueFolded(tries, nonce) {
  const sidebar = document.getElementById('sidebar');
  if (nonce !== data.nonce || !sidebar || sidebar.classList.contains('show')) return;
  const held = inSidebar(sidebar, data.names);
  cue(held.map(name => `"${name}"`));
  if (held.length === 0 && tries < TRIES) setTimeout(() => cueFolded(tries + 1, nonce), TRY_MS);
}
function point(tries, nonce) {
  if (nonce !== data.nonce) return;  // another step opened meanwhile
  const sidebar = document.getElementById('sidebar');
  if (!sidebar) return;
  if (sidebar.classList.contains('show')) cue([]);
  // Each name quoted, so a list of labels reads as labels ("Swap the value of", "with the
  // value of": Orca read them as one phrase).
  const names = data.names.map(name => `"${name}"`).join(', ');
  const toggle = document.getElementById('sidebar-toggle');
  if (!sidebar.classList.contains('show') && toggle) {
    // Folded (a laptop, a phone, presenter mode): nothing in it is drawn, so nothing can be
    // found. Outline the way in, say where the controls are, and point at them once opened.
    outline(toggle);
    said.textContent = words('folded', names);
    cueFolded(0, nonce);
    state.pending = nonce;
    if (!state.watching) {
      state.watching = true;
      toggle.addEventListener('click', () => {
        cue([]);
        if (state.pending !== data.nonce) return;
        state.pending = null;
        whenOpened(0, data.nonce);
      });
    }
    return;
  }
  const found = findControls(sidebar, data.names);
  // The first name is the one the step acts on: wait for it (it may still be being drawn).
  if (found[0] == null && tries < TRIES) {
    setTimeout(() => point(tries + 1, nonce), TRY_MS);
    return;
  }
  const hosts = found.filter((host, i) => host != null && found.indexOf(host) === i);
  if (hosts.length === 0) return;
  const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  hosts[0].scrollIntoView({block: 'center', behavior: still ? 'auto' : 'smooth'});
  hosts.forEach(outline);
  said.textContent = words('highlighted', names);
}
// The sidebar slides open after its button is pressed: point once it is shown.
function whenOpened(tries, nonce) {
  const sidebar = document.getElementById('sidebar');
  if (nonce !== data.nonce || !sidebar) return;
  if (sidebar.classList.contains('show')) point(0, nonce);
  else if (tries < TRIES) setTimeout(() => whenOpened(tries + 1, nonce), TRY_MS);
}
state.point = () => point(0, data.nonce);
// The verdict into view once its new text is drawn: its start first when it is taller than the
// window ('nearest'), the nearest scroller (the lesson column, the page) moved as little as
// possible.
function showVerdict(root) {
  const found = deep(root, el => el.classList && el.classList.contains('lab-lesson-result') &&
    el.getClientRects().length > 0, [])[0];
  if (!found) return null;
  const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  found.scrollIntoView({block: 'nearest', behavior: still ? 'auto' : 'smooth'});
  return found;
}
state.showVerdict = showVerdict;
state.labelMatches = labelMatches;
state.words = words;
state.findControls = findControls;
if (data.nonce > 0) state.point();
// @script nonce
state.point();
// @script shown
setTimeout(() => state.showVerdict(document), 150);
