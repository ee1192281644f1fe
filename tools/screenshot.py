"""Regenerate docs/images/screenshot.png (used by the README): `python -m tools.screenshot`.

Serves the lab, opens a configured link in headless Chromium at projector size, and saves the
visible page once every plot has drawn.
"""

from __future__ import annotations

import sys

from tests.browser.labpage import wait_until_settled
from tools.bench_ui import lab_page
from tools.harness import ROOT

# One query turned towards B, a cooler temperature and C masked: every view has something to show.
LINK = "?angle=35&temperature=0.6&mask=true,true,false"


def main(out: str = str(ROOT / "docs" / "images" / "screenshot.png")) -> None:
    with lab_page(LINK, viewport={"width": 1600, "height": 1000}) as page:
        wait_until_settled(page)  # fonts, stylesheets, every view drawn, the layout still
        page.screenshot(path=out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
