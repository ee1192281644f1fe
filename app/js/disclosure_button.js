// DisclosureButton (app/page/deferred.py): a button that opens and closes a section, announced
// as expanded or collapsed, as the ReactiveHTML scripts Panel runs (`data` is the component's
// parameters, `self` calls its other scripts, `btn` and `arrow` are its elements).
// @script render
btn.setAttribute('aria-label', data.label); self.open();
// @script open
btn.setAttribute('aria-expanded', data.open ? 'true' : 'false');
arrow.textContent = data.open ? '▾' : '▸';
// @script toggle
data.open = !data.open;
