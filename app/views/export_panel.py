"""Share and export: the link, the configuration as JSON (and its import), the numbers as CSV.

Each plot has its own PNG save button in its toolbar.
"""

from __future__ import annotations

import html
import io
import json

import panel as pn
import param
from panel.reactive import ReactiveHTML

from app import js
from app.i18n.translator import ENGLISH, Translator
from app.state import settings_schema
from app.state.lab_state import LabState
from engine.wording import worded

from .notify import notify
from .phrases import phrase_text

# A file is sent to the server base64-encoded in one websocket message, and a message over
# Bokeh's 20 MiB limit drops the connection. Anything over the import cap is refused anyway, so
# the browser refuses files this large before they are sent; smaller ones get the server's word.
BROWSER_IMPORT_LIMIT = 2**20

_GUARD_SCRIPT = js.source("upload_guard.js", LIMIT=BROWSER_IMPORT_LIMIT)
_COPY_LINK = js.source("copy_link.js")


class UploadSizeGuard(ReactiveHTML):
    """Invisible; refuses oversized files in the browser and reports which one in `refused`."""

    refused = param.String(default="", doc="JSON {name, size, at} of the last refused file")

    _template = '<div id="size_guard" aria-hidden="true" style="display:none"></div>'
    _scripts = {"render": _GUARD_SCRIPT}  # noqa: RUF012 - Panel reads this class attribute


class ExportView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab it shares")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr, self._ = tr, tr.gettext
        _ = self._
        self.json_download = pn.widgets.FileDownload(
            callback=self._json,
            filename="attention-lab.json",
            color="primary",
            label=_("Download configuration (JSON)"),
            sizing_mode="stretch_width",
        )
        self.csv_download = pn.widgets.FileDownload(
            callback=self._csv,
            filename="attention-lab.csv",
            color="default",
            label=_("Download current numbers (CSV)"),
            sizing_mode="stretch_width",
        )
        self.copy_link = pn.widgets.Button(
            label=_("Copy a link to this exact lab"),
            color="success",
            sizing_mode="stretch_width",
        )
        # In the browser only: the address bar already holds the whole configuration.
        self.copy_link.js_on_click(code=_COPY_LINK)
        self.upload = pn.widgets.FileInput(
            accept=".json,application/json",
            multiple=False,
            label=_("Import a configuration (JSON)"),
        )
        self.upload.param.watch(self._import, "value")
        self.guard = UploadSizeGuard()
        self.guard.param.watch(self._refused_in_browser, "refused")
        self.message = pn.pane.Alert(
            "", alert_type="info", visible=False, sizing_mode="stretch_width"
        )

    def _json(self):
        return io.StringIO(self.state.to_json())

    def _csv(self):
        return io.StringIO(self.state.to_csv())

    def _import(self, event):
        data = event.new
        if not data:
            return
        # The name is the client's to say: shown at most this long, whatever arrived.
        name = short_name(self.upload.filename, self.tr)
        _ = self._
        try:
            self.state.from_json(data)
        except ValueError as exc:
            # TRANSLATORS: {name} is the file's name; {reason} why (already translated).
            refused = _("{name} was not imported: {reason}")
            self._show(
                refused.format(name=name, reason=phrase_text(worded(exc), self.tr)), "danger"
            )
            return
        except Exception as exc:  # noqa: BLE001 - never a traceback in the page
            failed = _("{name} was not imported ({error})")
            self._show(failed.format(name=name, error=f"{type(exc).__name__}: {exc}"), "danger")
            return
        self._show(_("Imported {name}.").format(name=name), "success")

    def _refused_in_browser(self, event):
        try:
            info = json.loads(event.new)
            name, size = short_name(str(info["name"]), self.tr), int(info["size"])
        except (ValueError, TypeError, KeyError):
            return  # not a report the guard wrote: nothing to show
        reason = settings_schema.import_too_big(size)
        refused = self._("{name} was not imported: {reason}")
        self._show(refused.format(name=name, reason=phrase_text(reason, self.tr)), "danger")

    def _show(self, text: str, kind: str) -> None:
        self.message.object = html.escape(text)
        self.message.alert_type = kind
        self.message.visible = True
        notify("error" if kind == "danger" else "success", text)

    def __panel__(self):
        return pn.Column(
            pn.pane.Markdown(
                # TRANSLATORS: the Share & export tab's introduction (Markdown: keep the **).
                self._(
                    "**Share:** the address bar always holds the whole configuration; copy it to "
                    "send this exact lab to a class."
                )
                + "\n\n"
                + self._("**Plots:** each plot's toolbar has a save button for a PNG."),
                sizing_mode="stretch_width",
            ),
            self.copy_link,
            self.json_download,
            self.csv_download,
            pn.pane.Markdown(
                self._("**Import** a configuration saved earlier:"), margin=(10, 10, 0, 10)
            ),
            self.upload,
            self.guard,
            self.message,
            sizing_mode="stretch_width",
        )


MAX_NAME = 80


def short_name(name, tr: Translator = ENGLISH) -> str:
    """A file name as the page shows it: printable, at most MAX_NAME characters."""
    text = "".join(c for c in str(name or "")[: MAX_NAME * 4] if c.isprintable()).strip()
    if not text:
        # TRANSLATORS: an imported file that has no name: "the file was not imported: ...".
        return tr.gettext("the file")
    return text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"
