// The "Copy a link to this exact lab" button (app/views/export_panel.py), in the browser only:
// the address bar already holds the whole configuration. `source` is the button.
navigator.clipboard.writeText(window.location.href)
  .then(() => { source.label = 'Link copied'; })
  .catch(() => { source.label = 'Copy the address bar to share'; });
