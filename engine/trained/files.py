"""The GGUF model files the operator listed, each under a short name (issue 43).

`attention-lab --model PATH` or a notebook's `add_file(path)` lists a file; the page's model menu
and a link's `?model=NAME` then know it by that name, and `engine.trained` loads it once per
process through `gguf_model.load_file`. A served page only ever opens a file by a listed name:
the path itself is the operator's, never a visitor's. `engine.trained.load(path)` opens a path
directly (a notebook's way), keyed by the resolved path so a file is read once per process
whether it is named or not.

Nothing here reads more of a file than its first metadata keys (for its title); a file whose
content is bad is found out when it loads, and its error is shown where the model would be.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".gguf"
# Float32 weights of about a billion parameters (4 bytes each): what a laptop of 8 to 16 GB
# holds beside its browser, its system and the lab's own runs. A larger model needs the
# operator's say (--max-model-mb), rather than a page that swaps the machine to a halt.
DEFAULT_MAX_MB = 4096.0
NAME_CHARS = 48  # a name travels in every link (`?model=NAME`) and fits the model menu
# Letters, digits, '.', '_' and '-', starting with a letter or a digit: safe in a URL, in a
# menu and as a file name, and never a path ('/', '..') that could be taken for one.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
INSTALL_COMMAND = "pip install 'attention-lab[lm]'"
PACKAGES = ("gguf", "tokenizers")  # what reading a GGUF file needs (the `lm` extra)
TITLE_CHARS = 60


@dataclass(frozen=True)
class ModelFile:
    """One model file: its name (menu, links) and its resolved path."""

    name: str
    path: Path

    @property
    def key(self) -> str:
        """Its key in `loading`: the resolved path, so the same file loads once per process,
        by name or by path."""
        return str(self.path)


_FILES: dict[str, ModelFile] = {}  # name -> file, in the order listed
_RESERVED: set[str] = set()  # the shipped models' names (lower case)
_LIMIT = {"max_mb": DEFAULT_MAX_MB}
_TITLES: dict[tuple, str | None] = {}  # (path, size, mtime) -> general.name as read


# ------------------------------------------------------------------------------ the list


def reserve_names(names: Iterable[str]) -> None:
    """Names a file may not take (the models the lab ships), compared without case."""
    _RESERVED.update(name.lower() for name in names)


def check_name(name: str, path: Path | str) -> None:
    """ValueError naming the file when `name` cannot be a model's name."""
    if not (NAME_PATTERN.fullmatch(name) and len(name) <= NAME_CHARS):
        raise ValueError(
            f"{path}: {name!r} cannot be a model's name: use up to {NAME_CHARS} letters, digits, "
            "'.', '_' or '-', starting with a letter or digit (--model NAME=PATH names it)"
        )
    if name.lower().endswith(SUFFIX):
        raise ValueError(f"{path}: a model's name {name!r} may not end in {SUFFIX}")
    if name.lower() in _RESERVED:
        raise ValueError(f"{path}: {name!r} is the name of a model the lab ships; choose another")


def default_name(path: Path | str) -> str:
    """The file's name without `.gguf` ("gpt2-small" for /models/gpt2-small.gguf)."""
    name = Path(path).name
    return name[: -len(SUFFIX)] if name.lower().endswith(SUFFIX) else name


def plan(entries: Iterable[tuple[str | None, Path | str]]) -> list[ModelFile]:
    """The files `entries` (name or None, path) would list, checked together and against
    those listed already; ValueError naming the file for a bad name, a name taken, or a path
    that is not a file. Lists nothing (the command line checks its flags with it)."""
    taken = {name.lower(): entry for name, entry in _FILES.items()}
    out = []
    for name, path in entries:
        path = Path(path).expanduser()
        name = default_name(path) if name is None else name
        check_name(name, path)
        if not path.is_file():
            raise ValueError(f"{path}: {'no such file' if not path.exists() else 'not a file'}")
        wanted = ModelFile(name, path.resolve())
        other = taken.get(name.lower())
        if other is not None and other != wanted:
            raise ValueError(f"{path}: the name {name!r} is taken by {other.path}; name it")
        taken[name.lower()] = wanted
        out.append(wanted)
    return out


def add_file(path: Path | str, name: str | None = None) -> str:
    """List a GGUF file under `name` (its file name without `.gguf` by default) and return the
    name; listing the same file under the same name again does nothing."""
    (listed,) = plan([(name, path)])
    _FILES[listed.name] = listed
    return listed.name


def remove_file(name: str) -> None:
    """Take a file off the list (a model it loaded stays in memory while it is used)."""
    _FILES.pop(name, None)


def listed() -> list[ModelFile]:
    return list(_FILES.values())


def find(name: str) -> ModelFile | None:
    """The file listed under `name`, or None."""
    return _FILES.get(name) if isinstance(name, str) else None


def is_path(value: object) -> bool:
    """Whether `load(value)` means a file: a Path, a text ending in .gguf, or an existing file."""
    if isinstance(value, os.PathLike):
        return True
    return isinstance(value, str) and (value.lower().endswith(SUFFIX) or os.path.isfile(value))


def at_path(path: Path | str) -> ModelFile:
    """The file at `path`: the listed one when it is listed (same name, same key), else one
    named after its file."""
    resolved = Path(path).expanduser().resolve()
    for entry in _FILES.values():
        if entry.path == resolved:
            return entry
    return ModelFile(default_name(resolved), resolved)


# ------------------------------------------------------------------------------ the limit


def set_max_mb(mb: float) -> None:
    """The largest model (its float32 weights, in MB) a file may load into."""
    mb = float(mb)
    if not (math.isfinite(mb) and mb > 0):
        raise ValueError(f"the largest model must be a positive number of MB, not {mb}")
    _LIMIT["max_mb"] = mb


def max_mb() -> float:
    return _LIMIT["max_mb"]


# ------------------------------------------------------------------------------ an entry


def status(entry: ModelFile) -> tuple[bool, str]:
    """(installed, reason): a file that has gone, or packages missing, are named."""
    if not entry.path.is_file():
        return False, f"the file {entry.path.name} is missing (the operator listed it; it has gone)"
    missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        return False, f"reading {entry.path.name} needs {', '.join(missing)}: {INSTALL_COMMAND}"
    return True, ""


def loader(entry: ModelFile) -> Callable[..., object]:
    """Its loader for `loading` (it reports progress), under the limit in force when it runs."""

    def load(progress: Callable[[float, str], None] | None = None) -> object:
        from . import gguf_model  # needs gguf: imported only when a file is opened

        return gguf_model.load_file(entry.path, name=entry.name, max_mb=max_mb(), progress=progress)

    return load


def title(entry: ModelFile) -> str:
    """The menu's words: "GPT-2 small (GGUF file gpt2)" from the file's `general.name`, or
    "gpt2 (GGUF file)" when it has none."""
    shown = general_name(entry.path)
    if shown and shown != entry.name:
        return f"{shown} (GGUF file {entry.name})"
    return f"{entry.name} (GGUF file)"


# ------------------------------------------------------------------------------ its title

# GGUF's value types (gguf-py's GGUFValueType): the byte size of each fixed-size one.
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
PEEK_KEYS = 32  # llama.cpp's converter writes general.* first; the vocabulary comes later
PEEK_STRING = 4096  # longer than any name; a longer string is not one worth reading


def general_name(path: Path) -> str | None:
    """The file's `general.name`, read from its first keys and kept while the file is
    unchanged; None when it has none there or cannot be read."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _TITLES:
        try:
            with open(path, "rb") as file:
                found = _peek_name(file)
        except (OSError, ValueError, struct.error, UnicodeDecodeError):
            found = None
        _TITLES[key] = _printable(found) if found else None
    return _TITLES[key]


def _peek_name(file) -> str | None:
    if file.read(4) != b"GGUF" or _unpack(file, "<I")[0] < 2:
        return None
    _, n_keys = _unpack(file, "<QQ")
    for _ in range(min(n_keys, PEEK_KEYS)):
        key = _string(file)
        (kind,) = _unpack(file, "<I")
        if key == "general.name" and kind == _STRING:
            return _string(file)
        if not _skip(file, kind):
            return None
    return None


def _skip(file, kind: int) -> bool:
    """Skip one value; False for what is not worth reading past (an array of strings)."""
    if kind in _FIXED:
        file.seek(_FIXED[kind], os.SEEK_CUR)
    elif kind == _STRING:
        file.seek(_unpack(file, "<Q")[0], os.SEEK_CUR)
    elif kind == _ARRAY:
        item, count = _unpack(file, "<IQ")
        if item not in _FIXED:
            return False
        file.seek(_FIXED[item] * count, os.SEEK_CUR)
    else:
        raise ValueError(f"GGUF value type {kind}")
    return True


def _string(file) -> str:
    (length,) = _unpack(file, "<Q")
    if length > PEEK_STRING:
        raise ValueError("a string too long for a name")
    return file.read(length).decode("utf-8")


def _unpack(file, layout: str) -> Sequence[int]:
    size = struct.calcsize(layout)
    return struct.unpack(layout, file.read(size))


def _printable(text: str) -> str | None:
    """One line of printable text, cut to the menu's width."""
    shown = " ".join("".join(ch for ch in text if ch.isprintable()).split())
    return shown[:TITLE_CHARS] or None
