"""A class in one room: the teacher's pace and every student's prediction, kept in a store.

Panel-free: a notebook, a test or the load tool can drive a class through `shared.open_store`.
The page's own wiring (app/views/class_panel.py) sits above it.
"""
