// LanguageMenu (app/page/language_menu.py): the header's language menu. Each choice is a link
// to this page's own address with `lang=` changed, written when the menu opens and again when
// a link is followed (the address changes with every setting: app/page/urlsync.py), so the
// lab opens in that language with the same settings, step and class. The session's language
// is marked `aria-current`; Esc closes the open menu and gives focus back to its summary.
// It also sets the page's <html lang dir> and title to the session's: a page rendered from a
// reused session of another language (Panel's --reuse-sessions) said that one's.
// @script render
const root = document.documentElement;
if (root.lang !== data.tag) root.lang = data.tag;
if (data.direction === 'rtl') root.dir = 'rtl';
else root.removeAttribute('dir');
if (data.title && document.title !== data.title) document.title = data.title;
function addressFor(code) {
  const url = new URL(window.location.href);
  url.searchParams.set('lang', code);
  return url.href;
}
function links() {
  return Array.from(choices.querySelectorAll('a[data-lang]'));
}
function mark() {
  for (const link of links()) {
    link.href = addressFor(link.dataset.lang);
    if (link.dataset.lang === data.current) link.setAttribute('aria-current', 'true');
    else link.removeAttribute('aria-current');
  }
}
for (const link of links()) {
  link.addEventListener('click', event => {
    event.preventDefault();
    window.location.assign(addressFor(link.dataset.lang));
  });
}
menu.addEventListener('toggle', mark);
menu.addEventListener('keydown', event => {
  if (event.key === 'Escape' && menu.open) {
    event.preventDefault();
    menu.open = false;
    toggle.focus();
  }
});
mark();
// @script current
const marked = choices.querySelector(`a[data-lang="${data.current}"]`);
for (const link of choices.querySelectorAll('a[aria-current]')) link.removeAttribute('aria-current');
if (marked) marked.setAttribute('aria-current', 'true');
