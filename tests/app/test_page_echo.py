"""The page's echo (app/page/a11y.py's PageTools), which the browser tests' `server_round_trip`
sends to know the server has handled everything before it."""

from app.page.a11y import PageTools


def test_the_echo_travels_from_the_page_and_comes_back():
    tools = PageTools()
    # Panel sends the page's change of a ReactiveHTML parameter only when a script assigns it.
    assert "echo" in tools._linked_properties
    tools.echo = 3
    assert tools.echoed == 3
