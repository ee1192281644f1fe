"""The benchmarks, the load tool and the harness that starts labs for them and for the tests.

Importing this package gives the process the session secret every lab it starts will sign its
session tokens with (tools/harness.py passes it on), so that Bokeh's client here signs its own
tokens alike. It must happen before Bokeh is imported: `bokeh.util.token` binds the secret into
its functions' defaults at import, and `bokeh.client` calls them with those defaults.
"""

import os
import secrets

if not os.environ.get("BOKEH_SECRET_KEY"):
    os.environ["BOKEH_SECRET_KEY"] = os.environ.get(
        "ATTENTION_LAB_SECRET_KEY"
    ) or secrets.token_urlsafe(48)
os.environ["BOKEH_SIGN_SESSIONS"] = "true"
