"""How a page honours what the open lesson step holds back until Measure (app/lessons/reveals.py).

`Lab` (app/page/lab_page.py) registers, beside each part's draw, one of these conceals: while
anything is held the part is drawn neutral instead (app/views/covered.py), generically, from
the step's own declaration; after Measure every part is drawn as before. The planes stay
drawn with the route left out, since the student acts on them, unless the step holds the
planes too. The headline states both the route and the model's answer: neutral while anything
is held.
"""

from __future__ import annotations

import html
from weakref import WeakKeyDictionary

import numpy as np

from app.i18n.head_words import head_words
from app.i18n.markers import N_
from app.i18n.said import Said
from app.i18n.translator import ENGLISH
from app.lessons.reveals import ANSWER, PLANES, WEIGHTS
from app.views.covered import conceal

# TRANSLATORS: the headline above the plots while a lesson step waits for Measure.
HEADLINE = N_("Predict first: the numbers appear when you press Measure.")
# TRANSLATORS: the title of the trained model's answer chart while a step holds it back.
MODEL_ANSWER = N_("The model's answer")
# The head finder's token a held page picked in place of the top weight's, per sidebar.
_PICKED: WeakKeyDictionary = WeakKeyDictionary()


def _tr(view):
    """The session's translator of a view that has one (`view.tr`), else English."""
    return getattr(view, "tr", ENGLISH)


def covering(what: str, title: str, draw):
    """The conceal of a part that shows `what`: neutral while it is held, else `draw`n."""

    def conceal_or_draw(view, snap, held) -> None:
        if what in held:
            conceal(view, title)
        else:
            draw(view, snap)

    return conceal_or_draw


def headline(view, snap, held) -> None:
    view.hold(_tr(view).gettext(HEADLINE))


def plots_in_words(draw):
    """The first screen's plots in words: nothing while the route or the planes are held."""

    def conceal_or_draw(view, snap, held) -> None:
        if WEIGHTS in held or PLANES in held:
            view.show(())
        else:
            draw(view, snap)

    return conceal_or_draw


def planes(draw):
    """The planes: empty while they are held, else drawn without the route while it is
    (`draw(view, snap, route=...)`)."""

    def conceal_or_draw(view, snap, held) -> None:
        if PLANES in held:
            view.conceal()
        else:
            draw(view, snap, route=WEIGHTS not in held)

    return conceal_or_draw


def model_answer(shown, draw):
    """The trained model's answer chart (in the model's main view), while the model is shown."""

    def conceal_or_draw(view, snap, held) -> None:
        if not shown():
            return
        if ANSWER in held:
            conceal(view.prediction, _tr(view).gettext(MODEL_ANSWER))
        else:
            draw(view, snap)

    return conceal_or_draw


def every_head(shown, draw):
    """Every head's grid and the open head's pattern, while the model is shown."""

    def conceal_or_draw(view, snap, held) -> None:
        if not shown():
            return
        if WEIGHTS in held:
            view.conceal()
        else:
            draw(view, snap)

    return conceal_or_draw


def found_head_note(shown):
    """The model's sidebar names the head it opens first and what was measured to find it (on
    SmolLM2, the most weight on ' loan' from 'was': step 19's answer), its head finder picks
    the top weight's token, and its loss strip shows each token's loss (the copying steps'
    answer). Drawn after the sidebar's own update, which writes all three."""

    def conceal_or_draw(view, snap, held) -> None:
        if not shown():
            return
        from app.views.model_panel import found_head_note as note  # a model's page only

        m = view.mstate
        view.loss.hold(ANSWER in held)  # each token's loss answers the steps on copying
        token = view.finder_token  # the head finder's token: the top weight's by default
        if WEIGHTS in held:
            text = Said(
                "Opened first: {head}. What was measured to find it shows once you measure.",
                head=head_words(*m.loaded.retrieval_head, _tr(view)),
            ).text(_tr(view))
            # The query's own token instead (Panel's Select takes no None once drawn).
            query = m.run.query_position if m.run is not None else None
            if query is not None and token.value != query and query in token.options.values():
                _PICKED[view] = query
                token.value = query
        else:
            text = note(m.loaded, m.layer, m.head, _tr(view))
            if _PICKED.pop(view, None) == token.value and m.snapshot is not None:
                token.value = int(np.argmax(m.snapshot.weights))  # unless the student chose
        if view.head_note.object != html.escape(text):
            view.head_note.object = html.escape(text)

    return conceal_or_draw
