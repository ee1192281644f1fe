"""Every student's language: the languages the lab speaks, the choice of one per session, the
gettext catalogues (compiled in memory from their .po files) and the per-session translator.

No module here imports Panel or Bokeh: the state marks its labels with `N_` (markers.py), the
views translate them where they are shown with their session's `Translator` (translator.py).
docs/translating.md says how to add a language.
"""
