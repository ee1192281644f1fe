"""Guided lessons: each step's words, and how they are translated (issue 44).

A step (`LessonStep` in lab_lessons.py, `ModelLessonStep` in model_lessons.py) is declared at
module level, before any session has a language, so its words are written in English and
translated where they are shown, by the lesson panel (app/views/lesson_panel.py) with its
session's `Translator`. Every lesson file follows the same protocol:

- **Words**: `part`, `title`, `setup`, `question`, each of `choices`, `action` and `takeaway`
  are English strings marked `N_("...")` (app/i18n/markers.py); the panel shows
  `tr.gettext(step.title)`. A `# TRANSLATORS:` comment goes on the line before a string whose
  place is not obvious. A part's name is marked where it is declared (`PART = N_("...")`).
- **Control names**: a step writes the controls it names in **bold**, as the English page
  labels them; a translation writes the same control, in bold, as the page labels it in that
  language (the lab catalogue's translation of the label). The pointer that outlines them reads
  the English names (`control_names(step)`), never the translated text.
- **Measurements**: `measure(before, after)` returns a `Said` (app/i18n/said.py), never a
  formatted str: one English template with `{placeholders}`, each number a `Number` made by
  app/lessons/numbers.py (`fixed(x, 2)`, `percent(x, 1)`, `significant(x, 3)`: the English
  exactly as `f"{x:.2f}"`, `f"{x:.1%}"`, `f"{x:.3g}"` wrote it), each clause that is a sentence
  of its own a nested `Said`, and data (a key's label, a token, a head's name) a plain str,
  never translated. `str(said)` is the English, for tests and logs.
- **Answers**: a prediction, a vote and its count are the answer's index in `choices`
  (`step.answer`, `step.is_right(i)`), never its text: the same answer reads differently on
  every page of a class.
- **Errors** a step raises (`RuntimeError`, `ModelStillLoading`) stay English: they are logged;
  the panel says in the page's language that the step could not start.

The English a step shows is byte-identical to what it was before any of this: the tests that
compare English text hold for every step.
"""
