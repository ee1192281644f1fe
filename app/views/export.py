"""Share and export: the link, the configuration as JSON (and its import), the numbers as CSV.

Each plot has its own PNG save button in its toolbar.
"""

from __future__ import annotations

import html
import io

import panel as pn

from .notify import notify


class ExportView(pn.viewable.Viewer):
    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self.json_download = pn.widgets.FileDownload(
            callback=self._json,
            filename="attention-lab.json",
            button_type="primary",
            label="Download configuration (JSON)",
            sizing_mode="stretch_width",
        )
        self.csv_download = pn.widgets.FileDownload(
            callback=self._csv,
            filename="attention-lab.csv",
            button_type="default",
            label="Download current numbers (CSV)",
            sizing_mode="stretch_width",
        )
        self.copy_link = pn.widgets.Button(
            label="Copy a link to this exact lab",
            button_type="success",
            sizing_mode="stretch_width",
        )
        # In the browser only: the address bar already holds the whole configuration.
        self.copy_link.js_on_click(
            code="navigator.clipboard.writeText(window.location.href)"
            ".then(() => { source.label = 'Link copied'; })"
            ".catch(() => { source.label = 'Copy the address bar to share'; });"
        )
        self.upload = pn.widgets.FileInput(
            accept=".json,application/json", multiple=False, label="Import a configuration (JSON)"
        )
        self.upload.param.watch(self._import, "value")
        self.message = pn.pane.Alert(
            "", alert_type="info", visible=False, sizing_mode="stretch_width"
        )

    def _json(self):
        return io.StringIO(self._state.to_json())

    def _csv(self):
        return io.StringIO(self._state.to_csv())

    def _import(self, event):
        data = event.new
        if not data:
            return
        name = self.upload.filename or "the file"
        try:
            self._state.from_json(data)
        except ValueError as exc:
            self._show(f"{name} was not imported: {exc}", "danger")
            return
        except Exception as exc:  # noqa: BLE001 - never a traceback in the page
            self._show(f"{name} was not imported ({type(exc).__name__}: {exc})", "danger")
            return
        self._show(f"Imported {name}.", "success")

    def _show(self, text: str, kind: str) -> None:
        self.message.object = html.escape(text)
        self.message.alert_type = kind
        self.message.visible = True
        notify("error" if kind == "danger" else "success", text)

    def __panel__(self):
        return pn.Column(
            pn.pane.Markdown(
                "**Share:** the address bar always holds the whole configuration; copy it to "
                "send this exact lab to a class.\n\n**Plots:** each plot's toolbar has a save "
                "button for a PNG.",
                sizing_mode="stretch_width",
            ),
            self.copy_link,
            self.json_download,
            self.csv_download,
            pn.pane.Markdown("**Import** a configuration saved earlier:", margin=(10, 10, 0, 10)),
            self.upload,
            self.message,
            sizing_mode="stretch_width",
        )
