"""`Said` and `Problem`: a sentence made far from any session is translated, with its numbers
written the language's way, where it is shown."""

from __future__ import annotations

import pytest
from babel.messages.catalog import Catalog

from app.i18n import catalogues
from app.i18n.said import Number, Said, joined
from app.i18n.translator import Translator
from engine.messages import Problem


@pytest.fixture
def spanish():
    made = Catalog(locale="es", domain="lab")
    made.add("{name} gets {share} of the weight", "{name} recibe {share} del peso")
    made.add("the temperature must be > 0, got {value}", "la temperatura debe ser > 0; es {value}")
    made.add("key {name}", "clave {name}")
    return Translator("es", catalogue=catalogues.compile_catalogue(made))


def test_a_sentence_is_translated_where_it_is_shown_with_its_numbers(spanish):
    said = Said(
        "{name} gets {share} of the weight",
        name=Said("key {name}", name="A"),
        share=Number(0.425, "percent", "0.0%"),
    )
    assert str(said) == "key A gets 42.5% of the weight"
    assert said.text(spanish) == "clave A recibe 42,5% del peso"
    assert joined([said, "(1.5)"], spanish) == "clave A recibe 42,5% del peso (1.5)"
    assert Number(1234.5, pattern="#,##0.0").text(spanish) == "1.234,5"


def test_an_engine_problem_is_a_value_error_that_keeps_its_template(spanish):
    with pytest.raises(ValueError, match="must be > 0, got -1") as caught:
        raise Problem("the temperature must be > 0, got {value}", value=-1)
    problem = caught.value
    shown = Said(problem.template, **problem.values).text(spanish)
    assert shown == "la temperatura debe ser > 0; es -1"


def test_numbers_come_from_a_bounded_shared_cache_and_read_as_babel_writes_them():
    """The translator keeps formatted numbers process-wide (app/i18n/translator.py), bounded,
    and each reads exactly as Babel's own functions write it, in every language and pattern."""
    import random

    from babel.numbers import format_decimal, format_percent, format_scientific

    from app.i18n.translator import FORMATTED_KEPT, formatted

    babel = {"decimal": format_decimal, "percent": format_percent, "scientific": format_scientific}
    patterns = {
        "decimal": [None, "0.00", "0.######", "@##", "#,##0"],
        "percent": [None, "0%", "0.0%"],
        "scientific": [None, "0.00E00"],
    }
    draw = random.Random(44)
    for code in ("en", "es", "zh-Hans", "ar"):
        tr = Translator(code)
        for _ in range(300):
            kind = draw.choice(list(patterns))
            pattern = draw.choice(patterns[kind])
            x = draw.choice([draw.uniform(-2, 2), 10 ** draw.uniform(-9, 6), 2.675, 0.125])
            mine = getattr(tr, f"format_{kind}")(x, pattern)
            assert mine == babel[kind](x, format=pattern, locale=tr.language.numbers)
    assert formatted.cache_info().maxsize == FORMATTED_KEPT
    assert formatted.cache_info().hits > 0


def test_a_phrase_inside_an_arabic_sentence_keeps_its_own_direction():
    """Arabic sets each placeholder in a left-to-right isolate (for numbers and formulas); a
    translated phrase in one sits in a first-strong isolate, so its words keep their order."""
    from app.i18n.said import Said

    inner = Said("same ranking")
    outer = Said(
        "Temperature {before_t} -> {after_t}: max weight {before} -> {after}, {ranking}.",
        before_t="0.25",
        after_t="1",
        before="0.615",
        after="0.424",
        ranking=inner,
    )
    arabic = outer.text(Translator("ar"))
    assert f"\u2068{inner.text(Translator('ar'))}\u2069" in arabic
    assert outer.text(Translator("es")).endswith("el mismo orden.")
    assert str(outer) == "Temperature 0.25 -> 1: max weight 0.615 -> 0.424, same ranking."
