// ShownSignal (app/page/deferred.py): the placeholder of views built when first seen, as the
// ReactiveHTML scripts Panel runs (`data` is the component's parameters, `state` its scratch
// object, `box` its section). "render" watches the placeholder and sets data.seen once a fifth
// of it is on screen (the first screen's grid ends just above it, and a sliver at the bottom
// edge is not a student looking at it); the button sets it at once.
// @script render
if (data.seen) return;
const observer = new IntersectionObserver(entries => {
  if (entries.some(e => e.isIntersecting)) { observer.disconnect(); data.seen = true; }
}, {threshold: 0.2});
observer.observe(box);
state.observer = observer;
// @script show
data.seen = true;
// @script remove
if (state.observer) state.observer.disconnect();
