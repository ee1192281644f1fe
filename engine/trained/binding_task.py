"""The binding task: programs of definitions and one question, e.g. ``a=5; b=7; a=3; ?a`` -> ``3``.

Grammar (whitespace is ignored everywhere)::

    program    := definition{1..MAX_DEFS} "?" NAME
    definition := NAME "=" VALUE ";"

The latest definition of a name wins; a question about a name that was never defined has the
answer ``none``. The model sees ``<bos>`` followed by the program's tokens and its prediction is
read at the last position (the asked name). Training draws 2 to ``MAX_DEFS`` definitions.

Everything here is NumPy and the standard library, so the app can parse without torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

NAMES: tuple[str, ...] = (
    "approved_limit",
    "temporary_limit",
    "limit",
    "charge",
    "rate",
    "total",
    "price",
    "tax",
    "count",
    "a",
    "b",
    "c",
    "n",
    "x",
    "y",
    "z",
)
VALUES: tuple[str, ...] = (
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "10",
    "12",
    "25",
    "42",
    "100",
    "250",
    "500",
    "1000",
    "5000",
    "7000",
)
NONE = "none"
BOS = "<bos>"
SYMBOLS: tuple[str, ...] = ("=", ";", "?")
# Input vocabulary: <bos>, the symbols, names, values. ``none`` is only ever an answer.
VOCAB: tuple[str, ...] = (BOS, *SYMBOLS, *NAMES, *VALUES)
TOKEN_ID = {t: i for i, t in enumerate(VOCAB)}
ANSWERS: tuple[str, ...] = (*VALUES, NONE)
ANSWER_ID = {t: i for i, t in enumerate(ANSWERS)}

MIN_DEFS, MAX_DEFS = 1, 6
TRAIN_MIN_DEFS = 2
MAX_LEN = 1 + 4 * MAX_DEFS + 2  # <bos>, four tokens per definition, "?" and the name
MAX_CHARS = 2000

_LEXEME = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_]*)|(-?\d+)|([=;?]))")


@dataclass(frozen=True)
class Program:
    """A parsed program: its tokens (with ``<bos>``), definitions and question."""

    text: str
    tokens: tuple[str, ...]
    offsets: tuple[int, ...]  # character offset of each token in ``text`` (-1 for <bos>)
    definitions: tuple[tuple[str, str], ...]
    question: str

    @property
    def answer(self) -> str:
        for name, value in reversed(self.definitions):
            if name == self.question:
                return value
        return NONE

    @property
    def answer_definition(self) -> int | None:
        """Index of the definition that answers the question (None when undefined)."""
        for i in range(len(self.definitions) - 1, -1, -1):
            if self.definitions[i][0] == self.question:
                return i
        return None

    @property
    def kind(self) -> str:
        """ "plain" (asked name defined once), "rebound" (more than once) or "undefined"."""
        count = sum(name == self.question for name, _ in self.definitions)
        return "undefined" if count == 0 else ("plain" if count == 1 else "rebound")

    @property
    def ids(self) -> np.ndarray:
        return np.array([TOKEN_ID[t] for t in self.tokens], dtype=np.int64)

    @property
    def query_position(self) -> int:
        return len(self.tokens) - 1


def definition_span(index: int) -> range:
    """Token positions (with <bos> at 0) of definition ``index``: name, "=", value, ";"."""
    start = 1 + 4 * index
    return range(start, start + 4)


def value_position(index: int) -> int:
    return 1 + 4 * index + 2


def token_kind(tokens: tuple[str, ...] | list[str], position: int) -> str:
    """The kind of a token: "first", "=", ";", "?", "name", "value" or "question" (the last)."""
    if position == 0:
        return "first"
    if position == len(tokens) - 1:
        return "question"
    t = tokens[position]
    if t in SYMBOLS:
        return t
    return "name" if t in NAMES else "value"


def _where(text: str, offset: int) -> str:
    return f"at character offset {offset}"


def lex(text: str) -> list[tuple[str, int]]:
    """(lexeme, character offset) pairs; ValueError on a character that starts no lexeme."""
    if not isinstance(text, str):
        raise ValueError(f"a program must be text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ValueError(f"the program is {len(text)} characters long; the limit is {MAX_CHARS}")
    out: list[tuple[str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _LEXEME.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"unexpected character {text[pos]!r} {_where(text, pos)}")
        start = m.start(m.lastindex)
        out.append((m.group(m.lastindex), start))
        pos = m.end()
    return out


def parse(text: str) -> Program:
    """Parse a program, or raise ValueError naming the bad token and where it is."""
    lexemes = lex(text)
    if not lexemes:
        raise ValueError("the program is empty: write definitions like 'a=5;' then '?a'")
    questions = [i for i, (t, _) in enumerate(lexemes) if t == "?"]
    if not questions:
        raise ValueError("the program has no question: end it with '?' and a name, e.g. '?a'")
    if len(questions) > 1:
        t, off = lexemes[questions[1]]
        raise ValueError(
            f"a second question '?' (token {questions[1]}) {_where(text, off)}: "
            "a program asks exactly one question, at the end"
        )

    def tok(i: int) -> str:
        t, off = lexemes[i]
        return f"{t!r} (token {i}) {_where(text, off)}"

    defs: list[tuple[str, str]] = []
    i = 0
    q = questions[0]
    while i < q:
        name, off = lexemes[i]
        if name not in NAMES:
            if name in SYMBOLS or re.fullmatch(r"-?\d+", name):
                raise ValueError(f"expected a name to define, got {tok(i)}")
            raise ValueError(f"unknown name {tok(i)}; known names: {', '.join(NAMES)}")
        if i + 1 >= q or lexemes[i + 1][0] != "=":
            got = tok(i + 1) if i + 1 < q else f"'?' (token {q})"
            raise ValueError(f"expected '=' after the name {name!r}, got {got}")
        if i + 2 >= q:
            raise ValueError(f"the definition of {name!r} has no value before '?' (token {q})")
        value = lexemes[i + 2][0]
        if value not in VALUES:
            if value in SYMBOLS or value in NAMES or not re.fullmatch(r"-?\d+", value):
                raise ValueError(f"expected a value after '{name}=', got {tok(i + 2)}")
            raise ValueError(f"unknown value {tok(i + 2)}; known values: {', '.join(VALUES)}")
        if i + 3 >= q or lexemes[i + 3][0] != ";":
            got = tok(i + 3) if i + 3 < q else f"'?' (token {q})"
            raise ValueError(f"expected ';' after '{name}={value}', got {got}")
        defs.append((name, value))
        i += 4
        if len(defs) > MAX_DEFS:
            raise ValueError(
                f"too many definitions: the {len(defs)}th one starts at {tok(i - 4)}; "
                f"the model's window holds at most {MAX_DEFS}"
            )
    if not defs:
        raise ValueError(f"the question at {tok(q)} has no definition before it")
    if q + 1 >= len(lexemes):
        raise ValueError(f"the question at {tok(q)} names nothing: write e.g. '?a'")
    asked = lexemes[q + 1][0]
    if asked not in NAMES:
        if asked in SYMBOLS or re.fullmatch(r"-?\d+", asked):
            raise ValueError(f"expected a name after '?', got {tok(q + 1)}")
        raise ValueError(f"unknown name {tok(q + 1)}; known names: {', '.join(NAMES)}")
    if q + 2 < len(lexemes):
        raise ValueError(f"the question must come last, but {tok(q + 2)} follows it")
    tokens = (BOS, *(t for t, _ in lexemes))
    offsets = (-1, *(off for _, off in lexemes))
    return Program(text, tokens, offsets, tuple(defs), asked)


def render(definitions, question: str) -> str:
    """Canonical text of a program."""
    return " ".join(f"{n}={v};" for n, v in definitions) + f" ?{question}"


def generate(
    rng: np.random.Generator,
    *,
    p_undefined: float = 0.2,
    p_rebind: float = 0.35,
    min_defs: int = TRAIN_MIN_DEFS,
    max_defs: int = MAX_DEFS,
) -> Program:
    """One random program. The answer's definition sits at a uniformly drawn position, so
    "copy the last value" is right only 1 time in n; earlier copies of the asked name (rebinds)
    and undefined questions are drawn at the given rates."""
    n = int(rng.integers(min_defs, max_defs + 1))
    names = list(NAMES)
    vals = [VALUES[int(j)] for j in rng.integers(0, len(VALUES), size=n)]
    if rng.random() < p_undefined:
        asked = names[int(rng.integers(len(names)))]
        others = [m for m in names if m != asked]
        defs = [(others[int(rng.integers(len(others)))], vals[i]) for i in range(n)]
        return parse(render(defs, asked))
    asked = names[int(rng.integers(len(names)))]
    others = [m for m in names if m != asked]
    pos = int(rng.integers(n))
    defs = []
    for i in range(n):
        if i == pos or (i < pos and rng.random() < p_rebind):
            name = asked
        else:
            name = others[int(rng.integers(len(others)))]
        defs.append((name, vals[i]))
    return parse(render(defs, asked))


def dataset(seed: int, size: int, **kwargs) -> list[Program]:
    rng = np.random.default_rng(seed)
    return [generate(rng, **kwargs) for _ in range(size)]


def encode_batch(programs: list[Program]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids (B, L) right-padded with <bos>, query positions (B,), answer ids (B,))."""
    length = max(len(p.tokens) for p in programs)
    ids = np.zeros((len(programs), length), dtype=np.int64)
    for b, p in enumerate(programs):
        ids[b, : len(p.tokens)] = p.ids
    qpos = np.array([p.query_position for p in programs], dtype=np.int64)
    ans = np.array([ANSWER_ID[p.answer] for p in programs], dtype=np.int64)
    return ids, qpos, ans
