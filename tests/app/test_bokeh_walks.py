"""`walk_once` (app/patches/bokeh_walks.py): a batch of changes walks a document's model graph
once at its end if a change asked for a walk, and not at all if none did."""

from __future__ import annotations

import pytest
from bokeh.document import Document
from bokeh.document.models import DocumentModelManager
from bokeh.models import Column, Div

from app.patches.bokeh_walks import walk_once


@pytest.fixture
def walks(monkeypatch):
    """How many times any document's model graph has been walked."""
    count = []
    bokeh_walk = DocumentModelManager.recompute

    def counted(self):
        count.append(1)
        bokeh_walk(self)

    monkeypatch.setattr(DocumentModelManager, "recompute", counted)
    return count


def _page():
    doc = Document()
    column = Column(children=[Div(text="a")])
    doc.add_root(column)
    return doc, column


def test_changes_that_swap_models_walk_once_at_the_end(walks):
    doc, column = _page()
    first, second = Div(text="b"), Div(text="c")
    walks.clear()
    with walk_once(doc):
        column.children = [first]
        column.children = [first, second]
        assert walks == [] and doc.get_model_by_id(second.id) is None  # not walked yet
    assert walks == [1]
    assert doc.get_model_by_id(first.id) is first and doc.get_model_by_id(second.id) is second
    # Bokeh's own methods are back: a change now walks at once, as without the batch.
    assert "invalidate" not in vars(doc.models) and "recompute" not in vars(doc.models)
    column.children = [first]
    assert walks == [1, 1]


def test_changes_that_swap_no_model_do_not_walk(walks):
    doc, column = _page()
    walks.clear()
    with walk_once(doc):
        column.children[0].text = "changed"
        column.width = 300
    assert walks == []
    # Bokeh's own freeze walks at its end whatever happened inside: what walk_once spares.
    with doc.models.freeze():
        column.width = 200
    assert walks == [1]


def test_a_freeze_inside_walks_at_its_end_and_the_batch_only_for_what_came_after(walks):
    doc, column = _page()
    inside, after = Div(text="inside"), Div(text="after")
    walks.clear()
    with walk_once(doc):
        column.children = [Div(text="before")]
        with doc.models.freeze():
            column.children = [inside]
        assert walks == [1] and doc.get_model_by_id(inside.id) is inside
    assert walks == [1]  # nothing asked since the freeze's walk
    with walk_once(doc):
        with doc.models.freeze():
            column.children = [inside, Div(text="x")]
        column.children = [inside, after]
    assert walks == [1, 1, 1] and doc.get_model_by_id(after.id) is after


def test_a_batch_inside_a_batch_leaves_the_walk_to_the_outer_one(walks):
    doc, column = _page()
    added = Div(text="added")
    walks.clear()
    with walk_once(doc):
        with walk_once(doc):
            column.children = [added]
        assert walks == []
    assert walks == [1] and doc.get_model_by_id(added.id) is added


def test_without_a_document_it_does_nothing():
    with walk_once(None):
        pass
