"""Load a TOML recipe, apply ``--set key=value`` overrides, validate, and explain errors in one line."""

from __future__ import annotations

import tomllib
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from spare_gen.config.schema import Config


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line naming the file, key and value."""


def _parse_value(text: str) -> Any:
    """A TOML literal (``256``, ``true``, ``[2, 3]``, ``"x"``) or, failing that, a plain string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_override(data: dict, assignment: str) -> None:
    if "=" not in assignment:
        raise ConfigError(f"--set {assignment!r}: expected KEY=VALUE, e.g. render.size=256")
    key, _, value = assignment.partition("=")
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise ConfigError(f"--set {assignment!r}: empty key")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {assignment!r}: {p!r} is not a section")
    node[parts[-1]] = _parse_value(value.strip())


def _model_at(loc: tuple) -> type[BaseModel] | None:
    """The schema section that holds the key at ``loc`` (for listing allowed keys)."""
    model: Any = Config
    for part in loc[:-1]:
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        model = model.model_fields[part].annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _allowed(model: type[BaseModel] | None, loc: tuple) -> str:
    if model is None or loc[-1] not in model.model_fields:
        return ""
    ann = model.model_fields[loc[-1]].annotation
    if isinstance(ann, type) and issubclass(ann, Enum):
        return "; allowed: " + ", ".join(str(m.value) for m in ann)
    for arg in get_args(ann) if get_origin(ann) else ():
        if isinstance(arg, type) and issubclass(arg, Enum):
            return "; allowed keys: " + ", ".join(str(m.value) for m in arg)
    return ""


def format_error(err: ValidationError, source: str) -> str:
    first = err.errors()[0]
    loc = tuple(str(p) for p in first["loc"] if str(p) != "[key]")
    key = ".".join(loc)
    if first["type"] == "extra_forbidden":
        parent = _model_at(loc)
        allowed = ", ".join(parent.model_fields) if parent else ""
        msg = f"unknown key {key!r}" + (f"; allowed keys here: {allowed}" if allowed else "")
    else:
        value = first.get("input")
        msg = f"{key} = {value!r}: {first['msg'][0].lower()}{first['msg'][1:]}{_allowed(_model_at(loc), loc)}"
    more = f" (and {len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return f"config error in {source}: {msg}{more}"


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> Config:
    """Read ``path`` (or the built-in defaults when None), apply overrides, validate; raise ConfigError."""
    source = str(path) if path else "defaults"
    data: dict = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config error: file {str(p)!r} does not exist")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config error in {source}: not valid TOML ({exc})") from None
    for assignment in overrides or []:
        apply_override(data, assignment)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_error(exc, source)) from None
