"""A Markdown text rendered to HTML once per process, not once per page and change.

Panel's Markdown pane parses its text with markdown-it on every change of `object`
(`Markdown._transform_object`). The lab's lesson texts are the same for every student: when a
teacher presses Next, each following page rendered the same four texts again, a large share
of what a follower's page still paid per step (docs/patches.md has the figures).

What the function returns follows from the text and the pane's rendering parameters alone
(`dedent`, `renderer`, `extensions`, `plugins`, `hard_line_break`, `disable_anchors`,
`renderer_options`) and its class. `cache_markdown_html()` keys a bounded table on those and
hands back a copy of what Panel's own function returned the first time. Anything unusual (an
object that is not a string, a long text, an option that cannot be a key) goes to Panel's
function every time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of the two methods in Panel 1.9.4, as read: `_transform_object`
# is wrapped, and `_update` handed what it was handed (app/patches/replace.py).
CHECKED_SOURCE = {"_transform_object": "b63f55d6af161a93", "_update": "613bc39eb9e70c3b"}
MAX_ENTRIES = 2048  # lesson texts, status lines, captions: a few hundred in the whole lab
MAX_TEXT = 16_384  # characters; a longer text is rendered each time


def _key(pane, obj):
    if not isinstance(obj, str) or len(obj) > MAX_TEXT:
        return None
    key = (
        type(pane),
        obj,
        pane.dedent,
        pane.renderer,
        tuple(pane.extensions),
        tuple(pane.plugins),
        pane.hard_line_break,
        pane.disable_anchors,
        tuple(sorted(pane.renderer_options.items())),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def cache_markdown_html() -> bool:
    """Put the table in front of Panel's `Markdown._transform_object`, once per process; False
    if this Panel's function is not the source read (then nothing is changed)."""
    from panel.pane.markup import Markdown

    original = Markdown.__dict__.get("_transform_object")
    table: OrderedDict = OrderedDict()
    lock = threading.Lock()  # a server may build pages on several threads (--num-threads)

    def _transform_object(self, obj):
        key = _key(self, obj)
        if key is None:
            return original(self, obj)
        with lock:
            found = table.get(key)
            if found is not None:
                table.move_to_end(key)
        if found is None:
            found = original(self, obj)  # outside the lock: a long text blocks nobody
            with lock:
                table[key] = found
                while len(table) > MAX_ENTRIES:
                    table.popitem(last=False)
        return dict(found)

    _transform_object.lab_cached = True
    _transform_object.original = original
    _transform_object.table = table
    return guarded_replace(
        "markdown_html_once",
        Replacement(
            Markdown,
            "_transform_object",
            _transform_object,
            CHECKED_SOURCE["_transform_object"],
        ),
    )


def update_text_panes_with_their_text() -> bool:
    """A text pane whose text alone changed sends its new text, without recomputing every
    property.

    A text pane (Panel's `HTMLBasePane`: HTML, Markdown) re-renders through `_update` whenever
    one of its render parameters changes (`object`, and the options its text is made with, which
    for Markdown include its CSS classes), and Panel's `_update` recomputes all of the pane's
    properties (the design's stylesheets, sizes, classes: new stylesheet models made and matched
    again). Its other properties reach the browser through Panel's ordinary parameter sync, at
    the moment they change. Here, when the render parameters other than `object` are those of
    the pane's last full update, `_update` sends what `object` makes, the text, through the
    pane's own `_process_param_change` (so a subclass's processing still applies); the first
    update, any other change and a pane that streams its text go to Panel's own `_update`. A
    class follower's page re-renders four text panes per lesson step (what that saves is in
    docs/patches.md). False if this Panel's `HTMLBasePane._update` is not the source read (then
    nothing is changed).
    """
    from panel.pane.markup import HTMLBasePane

    original = HTMLBasePane.__dict__.get("_update")

    def _options(pane) -> tuple:
        return tuple(getattr(pane, p) for p in pane._rerender_params if p != "object")

    def _update(self, ref, model):
        options = _options(self)
        if self.enable_streaming or self.__dict__.get("_lab_render_options") != options:
            original(self, ref, model)
            self.__dict__["_lab_render_options"] = options
            return
        model.update(**self._process_param_change({"object": self.object}))

    _update.lab_text_only = True
    _update.original = original
    return guarded_replace(
        "text_panes_send_their_text",
        Replacement(HTMLBasePane, "_update", _update, CHECKED_SOURCE["_update"]),
    )
