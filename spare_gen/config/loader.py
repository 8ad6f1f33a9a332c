"""Load a TOML recipe, apply ``--set key=value`` overrides, validate, and explain errors in one line."""

from __future__ import annotations

import difflib
import json
import tomllib
from enum import Enum
from importlib.resources import files
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from spare_gen.config.schema import Config


# The command line's default recipe, shipped inside the package (so a run gives the same result from any
# folder); configs/default.toml in the repository is its user-visible copy (a test keeps them identical).
DEFAULT_CONFIG_FILE = Path(str(files("spare_gen.config") / "default.toml"))


# No key of the schema nests deeper than a few levels; a deeper value is a mistake (and would exhaust the stack).
MAX_DEPTH = 32
SHOWN_CHARS = 80  # an over-long --set argument in a one-line error keeps its start and end within this many characters


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line naming the file, key and value."""


def _depth(value: Any) -> int:
    """How deep arrays and tables nest in ``value`` (a scalar: 0); iterative, so no value can exhaust the stack."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        node, level = todo.pop()
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:
            children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
            todo.extend((child, level + 1) for child in children)
    return deepest


def _nested_toml(text: str, where: str) -> dict:
    """``text`` parsed as TOML (TOMLDecodeError for bad syntax); nesting deeper than MAX_DEPTH is a ConfigError line
    naming ``where``."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_DEPTH:
        raise ConfigError(f"config error in {where}: arrays or tables nested more than {MAX_DEPTH} deep")
    return data


def _shown(text: str) -> str:
    """``text`` quoted for a one-line error (``ascii``: undecodable bytes and control characters escaped); a long one
    keeps its two ends."""
    if len(text) > SHOWN_CHARS:
        keep = (SHOWN_CHARS - 5) // 2
        text = f"{text[:keep]} ... {text[-keep:]}"
    return ascii(text)


def _digits_error(exc: ValueError) -> str:
    """tomllib's error for an integer of more digits than Python converts, without its advice to the programmer."""
    return " ".join(str(exc).split(";")[0].split()).replace("Exceeds", "an integer exceeds", 1)


def _parse_value(text: str, key: str) -> Any:
    """A TOML literal (``256``, ``true``, ``[2, 3]``, ``"x"``) or, failing that, a plain string."""
    try:
        return _nested_toml(f"v = {text}", f"--set {key}=...")["v"]
    except ConfigError:
        raise
    except tomllib.TOMLDecodeError:
        return text
    except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
        raise ConfigError(f"--set {_shown(f'{key}={text}')}: {_digits_error(exc)}") from None


def apply_override(data: dict, assignment: str) -> None:
    if any(c in assignment for c in "\n\r\x00"):
        raise ConfigError(f"--set {_shown(assignment)}: a value must be on one line (it holds a line break or NUL)")
    try:
        assignment.encode("utf-8")
    except UnicodeEncodeError as exc:  # bytes of the command line that are not UTF-8 (os.fsdecode's surrogates)
        raise ConfigError(f"--set {_shown(assignment)}: not UTF-8 text (character {exc.start} is "
                          f"{ascii(assignment[exc.start])}, an undecodable byte); config keys and values are stored "
                          "as UTF-8") from None
    if "=" not in assignment:
        raise ConfigError(f"--set {_shown(assignment)}: expected KEY=VALUE, e.g. render.size=256")
    key, _, value = assignment.partition("=")
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set {_shown(assignment)}: empty key")
    if len(parts) > MAX_DEPTH:
        raise ConfigError(f"--set {_shown(assignment)}: the key has {len(parts)} levels, more than {MAX_DEPTH} "
                          "(no key of the config nests that deep)")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {_shown(assignment)}: {p!r} is not a section")
    node[parts[-1]] = _parse_value(value.strip(), key.strip())
    if _depth(data) > MAX_DEPTH:  # a deep key holding a deep value (each alone within the limit)
        raise ConfigError(f"--set {_shown(assignment)}: its key and value nest more than {MAX_DEPTH} deep")


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The schema section that holds the key at ``loc`` (for listing allowed keys); None for the root's own rules."""
    if not loc:
        return None
    model: Any = Config
    for part in loc[:-1]:
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        model = model.model_fields[part].annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _allowed(model: type[BaseModel] | None, loc: tuple) -> str:
    if model is None or not loc or loc[-1] not in model.model_fields:
        return ""
    ann = model.model_fields[loc[-1]].annotation
    if isinstance(ann, type) and issubclass(ann, Enum):
        return "; allowed: " + ", ".join(str(m.value) for m in ann)
    for arg in get_args(ann) if get_origin(ann) else ():
        if isinstance(arg, type) and issubclass(arg, Enum):
            return "; allowed keys: " + ", ".join(str(m.value) for m in arg)
    return ""


def _override_keys(overrides: list[str]) -> dict[str, str]:
    """Dotted key -> the ``--set`` argument that assigned it (the last one wins, as in apply_override)."""
    keys = {}
    for assignment in overrides:
        key = ".".join(p for p in assignment.partition("=")[0].strip().split(".") if p)
        keys[key] = assignment
    return keys


def _blame(loc: tuple, source: str, overrides: list[str]) -> str:
    """Where the bad value came from: the ``--set`` argument that set the key (or a section above it), else the file."""
    keys = _override_keys(overrides)
    for n in range(len(loc), 0, -1):
        assignment = keys.get(".".join(loc[:n]))
        if assignment is not None:
            return f"--set {assignment}"
    inside = [a for k, a in keys.items() if k.startswith(".".join(loc) + ".")]  # a cross-field rule of a section
    return " / ".join(f"--set {a}" for a in inside) if inside else source


def format_error(err: ValidationError, source: str, overrides: list[str] | None = None) -> str:
    first = err.errors()[0]
    loc = tuple(str(p) for p in first["loc"])
    if loc[-1:] == ("[key]",) and first["type"] != "extra_forbidden":  # pydantic's mark of a bad dict key, not a key
        loc = loc[:-1]
    key = ".".join(loc)
    source = _blame(loc, source, overrides or [])
    if first["type"] == "extra_forbidden":
        parent = _model_at(loc)
        allowed = ", ".join(parent.model_fields) if parent else ""
        close = difflib.get_close_matches(loc[-1], list(parent.model_fields) if parent else [], n=1)
        msg = f"unknown key {key!r}" + (f" (did you mean {'.'.join((*loc[:-1], close[0]))!r}?)" if close else "") \
            + (f"; allowed keys here: {allowed}" if allowed else "")
    else:
        value = first.get("input")
        text = first["msg"].removeprefix("Value error, ")
        text = f"{text[:1].lower()}{text[1:]}{_allowed(_model_at(loc), loc)}"
        if not loc:  # a rule of the whole config (it names its keys) or a value that is not JSON at all
            msg = text
        else:  # a section: its rule names the keys
            msg = f"{key}: {text}" if isinstance(value, dict) else f"{key} = {value!r}: {text}"
    more = f" (and {len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return f"config error in {source}: {msg}{more}"


def load_config(path: str | Path | None = None, overrides: list[str] | None = None, out: str | None = None) -> Config:
    """Read ``path`` (or the built-in defaults when None), apply overrides, validate; raise ConfigError.

    ``out`` (``--out DIR``): the output folder exactly as given, set after the overrides and never parsed as TOML
    (a re-quoted name could come back as another)."""
    source = str(path) if path else "defaults"
    data: dict = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config error: file {str(p)!r} does not exist")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config error in {source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        try:
            data = _nested_toml(text, source)
        except ConfigError:
            raise
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config error in {source}: not valid TOML ({' '.join(str(exc).split())})") from None
        except ValueError as exc:  # an integer of more digits than Python converts (sys.get_int_max_str_digits)
            raise ConfigError(f"config error in {source}: {_digits_error(exc)}") from None
    for assignment in overrides or []:
        apply_override(data, assignment)
    if out is not None:
        data["out"] = out
    try:
        # strict, through JSON: a string is not an int (render.size = "256" is an error, not 256); TOML dates
        # become strings, which only a string key takes
        return Config.model_validate_json(json.dumps(data, default=str), strict=True)
    except ValidationError as exc:
        raise ConfigError(format_error(exc, source, overrides)) from None
