"""The script `panel serve` runs: one lab page per browser session."""

from app.main import create_app

create_app().servable(title="Attention Lab")
