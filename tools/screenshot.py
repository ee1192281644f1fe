"""Regenerate docs/images/screenshot.png (used by the README): `python -m tools.screenshot`.

Serves the lab, opens a configured link in headless Chromium at projector size, and saves the
visible page once every plot has drawn.
"""

from __future__ import annotations

import sys

from tests.browser.labpage import (
    CHROMIUM_ARGS,
    LOADED,
    ROOT,
    LabServer,
    chromium_path,
    wait_until_settled,
)

# One query turned towards B, a cooler temperature and C masked: every view has something to show.
LINK = "?angle=35&temperature=0.6&mask=true,true,false"


def main(out: str = str(ROOT / "docs" / "images" / "screenshot.png")) -> None:
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise SystemExit("chromium is not installed")
    server = LabServer()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(server.url + LINK)
            page.wait_for_function(LOADED, timeout=30000)
            wait_until_settled(page)  # fonts, stylesheets, every view drawn, the layout still
            page.screenshot(path=out)
            browser.close()
    finally:
        server.stop()
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
