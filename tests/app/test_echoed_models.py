"""A model a page sends back in full (BokehJS still counts a model from the server's last patch
as new) is resolved by Bokeh's server to the instance it holds, and the warning it prints for
it is filtered from the lab's log (app/server/echoed_models.py); other Bokeh warnings still
show. tests/browser/test_offline_walk.py reads a served walk's log for any BokehUserWarning."""

from __future__ import annotations

import warnings

from bokeh.core.serialization import Deserializer, Serializer
from bokeh.models import Button
from bokeh.util.warnings import BokehUserWarning, warn

from app.server.echoed_models import quiet_echoed_models


def _echo(model):
    """Decode `model`'s full representation, as a page that echoes it sends it, on a server
    that already holds it; the instance Bokeh returns."""
    rep = Serializer(references=set()).encode(model)  # in full, not as a reference
    return Deserializer(references=[model]).decode(rep)


def test_bokeh_keeps_its_own_instance_of_an_echoed_model_and_says_so():
    button = Button(label="Measure")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert _echo(button) is button  # the server's model, untouched
    assert [str(w.message) for w in seen] == [f"reference already known '{button.id}'"]


def test_the_lab_filters_that_warning_and_no_other():
    button = Button(label="Measure")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_echoed_models()
        assert _echo(button) is button
        warn("something else", BokehUserWarning)
    assert [str(w.message) for w in seen] == ["something else"]
