// UploadSizeGuard (app/views/export_panel.py): refuses a file over the import limit in the
// browser, before Bokeh sends it in one websocket message, and reports it in data.refused (JSON
// {name, size, at}). A ReactiveHTML "render" script; the placeholder LIMIT (bytes) is filled in
// by export_panel.py.
const limit = __LIMIT__;
function guardInputs(root) {
  for (const el of root.querySelectorAll('*')) {
    if (el.shadowRoot) guardInputs(el.shadowRoot);
  }
  for (const input of root.querySelectorAll('input[type=file]')) {
    if (input.__labSizeGuard) continue;
    input.__labSizeGuard = true;
    // Capture phase on the input itself runs before Bokeh's own change listener.
    input.addEventListener('change', (event) => {
      const big = Array.from(input.files || []).find(f => f.size > limit);
      if (!big) return;
      event.stopImmediatePropagation();
      input.value = '';
      data.refused = JSON.stringify({name: big.name, size: big.size, at: Date.now()});
    }, true);
  }
}
guardInputs(document);
let tries = 0;
const timer = setInterval(() => { guardInputs(document); if (++tries >= 20) clearInterval(timer); }, 500);
