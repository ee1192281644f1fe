"""The lab's settings: where each is declared, and its text and JSON forms.

A setting is declared once, here, as a `Field`: its name (the URL and JSON key), its kind, its
bounds, the label its control shows and where that control sits on the page. The states'
parameters (`app/state/setting_params.py`), the widgets, the page's lists of controls,
`pipeline.Settings.of` and the address are all made from these declarations; a widget may offer
a narrower teaching range, never a wider one (tests/app/test_settings_declared.py walks them).

Pure functions with no Panel import, so the UI can wire `pn.state.location` to them and tests can
drive them without a server. Every value that arrives from outside (a URL, an imported JSON
file, a widget) passes through `parse_text` or `check_json`, which hold the server-side caps no
matter what a widget allows, and name the offending field in every error.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

from app.i18n.markers import N_
from engine.messages import Problem
from engine.scenarios import SCENARIOS
from engine.snapshot import TEMPERATURE_RANGE
from engine.wording import Amount, Phrase, worded

# Server-side caps (issue 5). Widgets may allow less; nothing that arrives may exceed these.
MAX_PAIRS = 8  # user-editable key/value pairs
MAX_DISTRACTORS = 4096  # generated keys on top of the pairs
D_K_MIN, D_K_MAX = 2, 4096
ANGLE_MIN, ANGLE_MAX = -180.0, 180.0
COORD_LIMIT = 1000.0  # |x|, |y| of any key or value coordinate
DISTRACTOR_NORM_MIN, DISTRACTOR_NORM_MAX = 0.01, 100.0
SIMILARITY_MIN, SIMILARITY_MAX = -1.0, 1.0
NULL_THRESHOLD_MIN, NULL_THRESHOLD_MAX = -100.0, 100.0
SEED_MAX = 2**31 - 1
LABEL_MAX_CHARS = 40
MAX_IMPORT_BYTES = 64 * 1024  # a JSON import larger than this is refused unread
MAX_QUERY_VALUE_CHARS = 2000  # one URL value longer than this is refused unparsed
# d_k x number of keys, so one session never holds a huge lifted key matrix (32 MiB of float64).
MAX_LIFT_ELEMENTS = 2**22

BACKENDS = ("numpy", "torch-cpu", "torch-cuda")
FORMAT_TAG = "attention-lab/1"

# Where a setting's control sits (Field.group).
FIRST_SCREEN = "first screen"  # the sidebar's first controls
MORE_SETTINGS = "More settings"  # behind the sidebar's "More settings", built when opened
MODEL_PANEL = "model panel"  # the trained model's sidebar


@dataclass(frozen=True)
class Field:
    """One setting: its name (the URL key and JSON key), its kind, its limits, and the label and
    place of its control ("" for a setting with no control of its own: a pair's coordinates)."""

    name: str
    # "float" | "int" | "bool" | "choice" | "pairs" | "bools" | "labels" (the scenarios'), and
    # "text" (high: its length), "positions" (whole numbers >= 0) and "heads" ("layer.head")
    # for a trained model's (make_model_fields).
    kind: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    label: str = ""
    group: str = ""

    @property
    def short_label(self) -> str:
        """The label as the lessons name the control: without its bracketed note ("Causal" for
        "Causal (hide later keys)")."""
        return self.label.split(" (")[0]

    @property
    def bounds(self) -> tuple[float | None, float | None]:
        return (self.low, self.high)

    def describe(self) -> Phrase:
        """What the setting accepts, as an error names it (a `Phrase`: said in the page's
        language)."""
        if self.kind in ("float", "int"):
            # TRANSLATORS: what a refused setting expected ("... out of range; expected ...").
            low, high = Amount(self.low), Amount(self.high)
            return Phrase(N_("a number from {low} to {high}"), {"low": low, "high": high})
        if self.kind == "bool":
            return Phrase(N_("true or false"))
        if self.kind == "choice":
            return Phrase(N_("one of {choices}"), {"choices": ", ".join(self.choices)})
        if self.kind == "pairs":
            return Phrase(
                N_("{most} pairs x,y separated by ';' (|x|, |y| <= {limit})"),
                {"most": f"1 to {MAX_PAIRS}", "limit": _num(COORD_LIMIT)},
            )
        if self.kind == "bools":
            return Phrase(N_("1 to {most} true/false values separated by ','"), {"most": MAX_PAIRS})
        if self.kind == "text":
            return Phrase(N_("text of at most {most} characters"), {"most": _num(self.high)})
        if self.kind == "positions":
            return Phrase(N_("token positions (whole numbers) separated by ','"))
        if self.kind == "heads":
            return Phrase(N_("heads written layer.head, separated by ','"))
        return Phrase(
            N_("a list of 1 to {most} labels, each at most {chars} characters"),
            {"most": MAX_PAIRS, "chars": LABEL_MAX_CHARS},
        )


def _item(name: str, i: int) -> str:
    """A list setting's entry, named as in a link: keys[2]."""
    return f"{name}[{i}]"


def _num(x: float | None) -> str:
    return format(x, "g") if x is not None else "?"


def make_fields(scenario_names: Sequence[str]) -> dict[str, Field]:
    """All settings in URL order. Scenario names come from the engine's catalogue."""
    first, more = {"group": FIRST_SCREEN}, {"group": MORE_SETTINGS}
    fields = [
        Field("scenario", "choice", choices=tuple(scenario_names), label=N_("Scenario"), **first),
        Field(
            "temperature",
            "float",
            *TEMPERATURE_RANGE,
            label=N_("Temperature τ (log scale)"),
            **first,
        ),
        Field("d_k", "int", D_K_MIN, D_K_MAX, label=N_("d_k (key dimension, log scale)"), **first),
        Field("scale", "bool", label=N_("Divide logits by √d_k"), **first),
        Field("angle", "float", ANGLE_MIN, ANGLE_MAX, label=N_("Query angle (degrees)"), **first),
        Field("causal", "bool", label=N_("Causal (hide later keys)"), **more),
        Field(
            "query_position",
            "int",
            0,
            MAX_PAIRS - 1,
            label=N_("Query position (causal hides keys after it)"),
            **more,
        ),
        Field(
            "seed",
            "int",
            0,
            SEED_MAX,
            label=N_("Random seed (hidden dimensions, distractors)"),
            **more,
        ),
        Field("normalise", "bool", label=N_("Normalise q and keys to unit length"), **first),
        Field("distractors", "int", 0, MAX_DISTRACTORS, label=N_("Distractor keys"), **more),
        Field(
            "distractor_norm",
            "float",
            DISTRACTOR_NORM_MIN,
            DISTRACTOR_NORM_MAX,
            label=N_("Distractor norm"),
            **more,
        ),
        Field(
            "distractor_similarity",
            "float",
            SIMILARITY_MIN,
            SIMILARITY_MAX,
            label=N_("Distractor similarity to q"),
            **more,
        ),
        Field(
            "null_route",
            "bool",
            label=N_("Null route (refuse when nothing is good enough)"),
            **more,
        ),
        Field(
            "null_threshold",
            "float",
            NULL_THRESHOLD_MIN,
            NULL_THRESHOLD_MAX,
            label=N_("Null-route threshold (logit)"),
            **more,
        ),
        Field("backend", "choice", choices=BACKENDS, label=N_("Backend"), **more),
        # The pairs are edited pair by pair (app/views/pairs.py), behind "More settings" too.
        Field("keys", "pairs", **more),
        Field("values", "pairs", **more),
        Field("mask", "bools", **more),
        Field("labels", "labels", **more),
    ]
    return {f.name: f for f in fields}


# The lab's settings, in URL order: the scenarios' names from the engine's catalogue.
FIELDS = make_fields(tuple(SCENARIOS))


def controls_in(group: str, fields: Mapping[str, Field] = FIELDS) -> dict[str, Field]:
    """The settings with a control of their own (a label) in `group`, in URL order."""
    return {name: f for name, f in fields.items() if f.group == group and f.label}


# A trained model's settings, in URL order: the same grammar as the scenarios' (parse_text,
# format_text), read and written by app/state/model_state.py. What depends on the model (its
# layers and heads, a text's positions) is checked there, once the model is known.
MODEL_TEXT_CHARS = 4000  # 512 tokens of English is about 2,500 characters
MODEL_ROTATE_RANGE = (-180.0, 180.0)
# What the head grid's cells show: each head's pattern, or one of the copying scores
# (engine.trained.copying.KINDS, in its order; tests/app/test_copy_tables.py checks).
FIND_HEADS = ("patterns", "previous_token", "duplicate_token", "induction", "first_token")
# A seed of repeated random words: six digits are plenty, and short in a link (the engine takes
# any up to engine.trained.repeated_words.SEED_MAX).
WORDS_SEED_MAX = 999_999


def make_model_fields(model_names: Sequence[str]) -> dict[str, Field]:
    """A trained model's settings in URL order; `model_names` may be empty where only the
    declarations are needed (the state's parameters: the models are checked when loaded)."""
    panel = {"group": MODEL_PANEL}
    fields = [
        Field("model", "choice", choices=tuple(model_names), label="Model", **panel),
        Field("text", "text", high=MODEL_TEXT_CHARS, label="Program (press Enter to run)", **panel),
        # Unbounded here: the model, once known, names its own range of layers, heads and
        # positions ("layer: 99 is not a layer of this model (0..29)").
        Field("layer", "int", label="Layer", **panel),
        Field("head", "int", label="Head", **panel),
        Field("query", "int", label="Query position", **panel),
        Field(
            "head_temperature",
            "float",
            *TEMPERATURE_RANGE,
            label="This head's temperature",
            **panel,
        ),
        Field(
            "rotate",
            "float",
            *MODEL_ROTATE_RANGE,
            label="Rotate this head's query (degrees)",
            **panel,
        ),
        Field("masked", "positions", label="Hide positions from this head", **panel),
        Field("ablated", "heads", label="Ablate heads (zero their output)", **panel),
        Field("backend", "choice", choices=BACKENDS, label="Run the model with", **panel),
        # The seed of a "Repeated random words" text (engine/trained/repeated_words.py): a link
        # with it opens that very draw.
        Field("words", "int", 0, WORDS_SEED_MAX, label="Seed of the words", **panel),
        # The head grid's own control (app/views/head_grid.py), below the first screen.
        Field("find", "choice", choices=FIND_HEADS, label="Find heads", **panel),
    ]
    return {f.name: f for f in fields}


# A trained model's settings as declared: what the state's parameters and the model panel's
# controls are made from (the models' names are filled in where a link is read, model_state).
MODEL_FIELDS = make_model_fields(())


# ---------------------------------------------------------------- checks shared by text and JSON


def _check_range(field: Field, x: float) -> float:
    if not math.isfinite(x):
        raise Problem("{name}: {value} is not a finite number", name=field.name, value=repr(x))
    if field.low is not None and x < field.low or field.high is not None and x > field.high:
        raise Problem(
            # TRANSLATORS: a refused setting; {name} is the setting's name in links (d_k).
            "{name}: {value} is out of range; expected {expected}",
            name=field.name,
            value=Amount(x),
            expected=field.describe(),
        )
    return x


def check_number(field: Field, value) -> None:
    """Refuse a number outside a numeric setting's range in the lab's own words (a `Problem`,
    said in the student's language) before the parameter's English check would."""
    if (
        field.kind in ("float", "int")
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        _check_range(field, float(value))


def _check_pairs(field: Field, pairs: list[list[float]]) -> list[list[float]]:
    if not 1 <= len(pairs) <= MAX_PAIRS:
        raise Problem(
            "{name}: {count} pairs given; expected {expected}",
            name=field.name,
            count=len(pairs),
            expected=field.describe(),
        )
    for i, (x, y) in enumerate(pairs):
        for c in (x, y):
            if not math.isfinite(c):
                raise Problem(
                    "{name}: {value} is not a finite number",
                    name=_item(field.name, i),
                    value=repr(c),
                )
            if abs(c) > COORD_LIMIT:
                raise Problem(
                    # TRANSLATORS: a refused key's coordinate; {name} is as in links (keys[0]).
                    "{name}: {value} exceeds the coordinate limit {limit}",
                    name=_item(field.name, i),
                    value=Amount(c),
                    limit=Amount(COORD_LIMIT),
                )
    return pairs


def _check_count(field: Field, n: int) -> None:
    if not 1 <= n <= MAX_PAIRS:
        raise Problem(
            "{name}: {count} entries given; expected {expected}",
            name=field.name,
            count=n,
            expected=field.describe(),
        )


def clean_label(text: str, *, where: str = "labels") -> str:
    """A label as plain text: no control characters, at most LABEL_MAX_CHARS characters.

    The UI escapes labels when it draws them; this function only caps and validates.
    """
    if not isinstance(text, str):
        raise Problem(
            "{name}: {kind} given; a label must be text", name=where, kind=_json_type(text)
        )
    text = text.strip()
    if not text:
        raise Problem("{name}: a label may not be empty", name=where)
    if len(text) > LABEL_MAX_CHARS:
        raise Problem(
            "{name}: label is {count} characters; at most {most}",
            name=where,
            count=len(text),
            most=LABEL_MAX_CHARS,
        )
    bad = [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")]
    if bad:
        raise Problem(
            # TRANSLATORS: {character} is the character's code, as '\x07'.
            "{name}: label contains the control character {character}",
            name=where,
            character=ascii(bad[0]),
        )
    return text


# ---------------------------------------------------------------- text (URL) form


def parse_text(field: Field, text: str):
    """One URL value -> a validated Python value. ValueError names the field and the value."""
    if not isinstance(text, str):
        raise Problem("{name}: expected text, got {kind}", name=field.name, kind=_json_type(text))
    if field.kind == "text":  # as written: a sentence's spaces are tokens
        if len(text) > field.high:
            raise Problem(
                "{name}: {count} characters; the lab takes at most {most}",
                name=field.name,
                count=len(text),
                most=Amount(field.high),
            )
        return text
    if len(text) > MAX_QUERY_VALUE_CHARS:
        raise Problem(
            "{name}: value is {count} characters long; refused", name=field.name, count=len(text)
        )
    raw = text.strip()
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    if field.kind == "float":
        return _check_range(field, _parse_float(field.name, raw))
    if field.kind == "int":
        try:
            value = int(raw, 10)
        except ValueError:
            raise Problem(
                "{name}: {value} is not a whole number", name=field.name, value=repr(shown)
            ) from None
        return int(_check_range(field, value))
    if field.kind == "bool":
        return _parse_bool(field.name, raw)
    if field.kind == "choice":
        if raw not in field.choices:
            raise Problem(
                "{name}: {value} is not {expected}",
                name=field.name,
                value=repr(shown),
                expected=field.describe(),
            )
        return raw
    return _parse_list(field, raw, shown)


def _parse_list(field: Field, raw: str, shown: str) -> list:
    """A list setting's URL value (pairs, flags, positions, heads, labels), validated."""
    if field.kind == "pairs":
        pairs = []
        for i, chunk in enumerate(raw.split(";")):
            parts = chunk.split(",")
            if len(parts) != 2:
                raise Problem(
                    # TRANSLATORS: a link's key position that is not two numbers (x,y).
                    "{name}: {value} is not a pair x,y",
                    name=_item(field.name, i),
                    value=repr(chunk.strip()[:40]),
                )
            pairs.append([_parse_float(f"{field.name}[{i}]", p.strip()) for p in parts])
        _check_count(field, len(pairs))
        return _check_pairs(field, pairs)
    if field.kind == "bools":
        flags = [_parse_bool(f"{field.name}[{i}]", p.strip()) for i, p in enumerate(raw.split(","))]
        _check_count(field, len(flags))
        return flags
    if field.kind == "positions":
        try:
            positions = [int(p.strip(), 10) for p in raw.split(",")]
        except ValueError:
            raise Problem(
                "{name}: {value} is not {expected}",
                name=field.name,
                value=repr(shown),
                expected=field.describe(),
            ) from None
        for p in positions:
            _check_range(field, p)
        return positions
    if field.kind == "heads":
        heads = [p.strip() for p in raw.split(",")]
        for head in heads:
            parts = head.split(".")
            if len(parts) != 2 or not all(p.isdigit() and p.isascii() for p in parts):
                raise Problem(
                    # TRANSLATORS: a link's head written as layer.head, as 1.4.
                    "{name}: {value} is not a head written layer.head",
                    name=field.name,
                    value=repr(head[:20]),
                )
        return heads
    if field.kind == "labels":
        # A JSON list, so labels may hold any printable character (commas too).
        try:
            items = json.loads(raw, parse_constant=_refuse_constant)
        except (json.JSONDecodeError, RecursionError):
            raise Problem(
                "{name}: {value} is not a JSON list of labels", name=field.name, value=repr(shown)
            ) from None
        return check_json(field, items)
    raise AssertionError(f"unknown field kind {field.kind}")


def _parse_float(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise Problem("{name}: {value} is not a number", name=name, value=repr(shown)) from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: {raw!r} is not a finite number")
    return value


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _parse_bool(name: str, raw: str) -> bool:
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    raise Problem("{name}: {value} is not true or false", name=name, value=repr(shown))


def format_text(field: Field, value) -> str:
    """A validated value -> its URL text; `parse_text(field, format_text(field, v)) == v`."""
    if field.kind == "float":
        return repr(float(value))
    if field.kind == "int":
        return str(int(value))
    if field.kind == "bool":
        return "true" if value else "false"
    if field.kind == "choice":
        return str(value)
    if field.kind == "pairs":
        return ";".join(f"{float(x)!r},{float(y)!r}" for x, y in value)
    if field.kind == "bools":
        return ",".join("true" if b else "false" for b in value)
    if field.kind == "labels":
        return json.dumps(list(value), ensure_ascii=False, separators=(",", ":"))
    if field.kind == "text":
        return str(value)
    if field.kind in ("positions", "heads"):
        return ",".join(str(v) for v in value)
    raise AssertionError(f"unknown field kind {field.kind}")


def parse_query(
    query: Mapping[str, str], fields: Mapping[str, Field]
) -> tuple[dict[str, object], list[str]]:
    """URL query values -> (valid values by name, warnings). Invalid or unknown keys are named."""
    values: dict[str, object] = {}
    warnings: list[str] = []
    for name, text in query.items():
        field = fields.get(name)
        if field is None:
            # TRANSLATORS: a link's warning; {name} is what the link wrote, never translated.
            warnings.append(
                Phrase(N_("unknown setting {name} ignored"), {"name": repr(str(name)[:40])})
            )
            continue
        try:
            values[name] = parse_text(field, text)
        except ValueError as exc:
            # TRANSLATORS: a link's warning; {problem} says what was wrong with a value.
            warnings.append(Phrase(N_("{problem}; using the default"), {"problem": worded(exc)}))
    return values, warnings


def format_query(
    values: Mapping[str, object], defaults: Mapping[str, object], fields: Mapping[str, Field]
) -> dict[str, str]:
    """Only the settings that differ from `defaults`, as URL text, in field order."""
    out: dict[str, str] = {}
    for name, field in fields.items():
        if name not in values:
            continue
        value = values[name]
        if name in defaults and _same(field, value, defaults[name]):
            continue
        out[name] = format_text(field, value)
    return out


def _same(field: Field, a, b) -> bool:
    return format_text(field, a) == format_text(field, b)


def query_string(params: Mapping[str, str]) -> str:
    """`{"d_k": "64"}` -> `"?d_k=64"` (empty string when there is nothing to say)."""
    return "?" + urlencode(list(params.items())) if params else ""


def split_query_string(search: str) -> dict[str, str]:
    """`"?a=1&b=2"` -> `{"a": "1", "b": "2"}`; a repeated key keeps its last value."""
    if len(search) > MAX_QUERY_VALUE_CHARS * 8:
        raise Problem("query string is {count} characters long; refused", count=len(search))
    return dict(parse_qsl(search.lstrip("?"), keep_blank_values=True))


# ---------------------------------------------------------------- JSON form


def check_json(field: Field, value):
    """One JSON value -> a validated Python value, strictly typed (no strings for numbers)."""
    name = field.name
    if field.kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Problem(
                "{name}: expected a number, got {kind}", name=name, kind=_json_type(value)
            )
        return _check_range(field, float(value))
    if field.kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise Problem(
                "{name}: expected a whole number, got {kind}", name=name, kind=_json_type(value)
            )
        return int(_check_range(field, value))
    if field.kind == "bool":
        if not isinstance(value, bool):
            raise Problem(
                "{name}: expected true or false, got {kind}", name=name, kind=_json_type(value)
            )
        return value
    if field.kind == "choice":
        if not isinstance(value, str) or value not in field.choices:
            shown = value[:40] if isinstance(value, str) else _json_type(value)
            raise Problem(
                "{name}: {value} is not {expected}",
                name=name,
                value=repr(shown),
                expected=field.describe(),
            )
        return value
    if not isinstance(value, list):
        raise Problem("{name}: expected a list, got {kind}", name=name, kind=_json_type(value))
    _check_count(field, len(value))
    if field.kind == "pairs":
        pairs = []
        for i, item in enumerate(value):
            if not isinstance(item, list) or len(item) != 2:
                raise Problem(
                    "{name}: expected a pair [x, y], got {kind}",
                    name=_item(name, i),
                    kind=_json_type(item),
                )
            for c in item:
                if isinstance(c, bool) or not isinstance(c, int | float):
                    raise Problem(
                        "{name}: expected numbers, got {kind}",
                        name=_item(name, i),
                        kind=_json_type(c),
                    )
            pairs.append([float(item[0]), float(item[1])])
        return _check_pairs(field, pairs)
    if field.kind == "bools":
        for i, item in enumerate(value):
            if not isinstance(item, bool):
                raise Problem(
                    "{name}: expected true or false, got {kind}",
                    name=_item(name, i),
                    kind=_json_type(item),
                )
        return list(value)
    if field.kind == "labels":
        return [clean_label(item, where=f"{name}[{i}]") for i, item in enumerate(value)]
    raise AssertionError(f"unknown field kind {field.kind}")


def _json_type(value) -> Phrase:
    """What a refused value is, in words (a `Phrase`: said in the student's language)."""
    if value is None:
        return Phrase("null")  # JSON's own word: not translated
    if isinstance(value, bool):
        # TRANSLATORS: what a refused JSON value is: "expected a number, got a boolean".
        return Phrase(N_("a boolean"))
    if isinstance(value, int | float):
        return Phrase(N_("the number {value}"), {"value": repr(value)})
    if isinstance(value, str):
        return Phrase(N_("text"))
    if isinstance(value, list):
        return Phrase(N_("a list"))
    if isinstance(value, dict):
        return Phrase(N_("an object"))
    return Phrase(type(value).__name__)  # a Python type's name: not translated


def _refuse_constant(name: str):
    raise Problem("{name} is not a finite number; the import is refused", name=name)


def import_too_big(size: int) -> Phrase:
    """Why an import of `size` bytes is refused unread (also said when the browser refuses it)."""
    return Phrase(
        N_("import is {size} bytes; the limit is {limit} bytes"),
        {"size": size, "limit": MAX_IMPORT_BYTES},
    )


def load_json(text: str | bytes) -> dict:
    """Import text -> a dict, refusing oversize input, NaN/Infinity and anything but an object."""
    if not isinstance(text, str | bytes):
        raise Problem("import must be text, got {kind}", kind=_json_type(text))
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_IMPORT_BYTES:
        raise Problem(import_too_big(size).template, **import_too_big(size).values)
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise Problem("import is nested too deeply to be a lab configuration") from None
    except json.JSONDecodeError as exc:
        raise Problem(
            # TRANSLATORS: {reason} is Python's own English reason ("Expecting value").
            "import is not valid JSON: {reason} at line {line}",
            reason=exc.msg,
            line=exc.lineno,
        ) from None
    except UnicodeDecodeError:
        raise Problem("import is not UTF-8 text") from None
    if not isinstance(data, dict):
        raise Problem("import must be a JSON object, got {kind}", kind=_json_type(data))
    return data


def check_config(data: Mapping, fields: Mapping[str, Field]) -> dict[str, object]:
    """A parsed JSON object -> validated values. Unknown keys and a wrong format tag are errors."""
    fmt = data.get("format", FORMAT_TAG)
    if fmt != FORMAT_TAG:
        shown = fmt[:40] if isinstance(fmt, str) else _json_type(fmt)
        raise Problem(
            "format: {value} is not {expected}", value=repr(shown), expected=repr(FORMAT_TAG)
        )
    unknown = [k for k in data if k != "format" and k not in fields]
    if unknown:
        raise Problem(
            "{name}: unknown setting; known: {known}",
            name=str(unknown[0])[:40],
            known=", ".join(fields),
        )
    return {name: check_json(fields[name], data[name]) for name in fields if name in data}


# ---------------------------------------------------------------- the lesson step

LESSON_PARAM = "lesson"


def parse_lesson(text: str, count: int) -> tuple[int, str]:
    """A `lesson` URL value -> (step number 1..count, warning). A bad value gives step 1."""
    field = Field(LESSON_PARAM, "int", 1, count)
    try:
        return parse_text(field, text), ""
    except ValueError as exc:
        return 1, f"{exc}; showing step 1"
