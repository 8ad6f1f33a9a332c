"""MkDocs hook: Markdown tables generated from the code's declared schemas, so the docs cannot copy them wrongly.

A page asks for a table with a marker ``<!-- generated: KIND module:NAME -->``; the hook imports ``module``
(from this checkout), reads ``NAME`` and writes the table in place of the marker. Kinds:

* ``arrow``    a ``pyarrow.Schema`` or a list of fields: column, type, description (the field's
  ``description`` metadata, else the comment beside the column in the module's source, else the metric
  registry's entry for a metric column); a dict of such lists gives one table per key.
* ``config``   a pydantic config model: every key (dotted), type, default, allowed range, description.
* ``enum``     an ``Enum``: each value with the comment beside its member in the source.
* ``metrics``  the wireframe metric registry (``name -> Metric``): name, family, direction, symmetric.
* ``severities`` the corruption severity table: kind, severity and each constant.
* ``cli``      the command line (``build_parser``): per subcommand its help, usage and arguments.

An unknown kind or a name that cannot be imported stops the build with one line naming the page and marker.
Sphinx roles left in rendered docstrings (``:func:`x` ``) are reduced to their code.
"""

from __future__ import annotations

import argparse
import ast
import enum
import importlib
import inspect
import re
import sys
import textwrap
import types
import typing
from pathlib import Path

import annotated_types
import pyarrow as pa
from mkdocs.exceptions import PluginError
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
USAGE_WIDTH = 96  # characters per usage line in the command reference
SPHINX_ROLE = re.compile(r":(?:func|data|class|mod|meth|attr|obj):(?=<code)")
MARKER = re.compile(r"<!--\s*generated:\s*(?P<kind>[\w-]+)\s+(?P<target>[\w.]+:\w+)\s*-->")
ARROW_COMMENT = re.compile(r"""^\s*(?:field\()?\(?\s*["'](?P<name>\w+)["']\s*,[^#\n]*#\s*(?P<comment>.+)$""")
ENUM_COMMENT = re.compile(r"^\s*(?P<member>[A-Z][A-Z0-9_]*)\s*=\s*[^#\n]+#\s*(?P<comment>.+)$")


def _load(target: str):
    """The object ``module:NAME`` of this checkout, and its module."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    module_name, name = target.split(":")
    module = importlib.import_module(module_name)
    return getattr(module, name), module


def _cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _table(header: tuple[str, ...], rows: list[tuple]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _segment(tree: ast.Module, name: str) -> set[int]:
    """Source line numbers of the module-level assignment of ``name`` and of the lists it unpacks (``*FIELDS``)."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            lines = set(range(node.lineno, node.end_lineno + 1))
            for sub in ast.walk(node):
                if isinstance(sub, ast.Starred) and isinstance(sub.value, ast.Name) and sub.value.id != name:
                    lines |= _segment(tree, sub.value.id)
            return lines
        if isinstance(node, ast.ClassDef) and node.name == name:
            return set(range(node.lineno, node.end_lineno + 1))
    return set()


def _source_comments(module: types.ModuleType, name: str, pattern: re.Pattern, group: str) -> dict[str, str]:
    """The comment beside each entry in the declaration of ``name`` (a comment-only line right after continues it)."""
    source = inspect.getsource(module)
    lines = source.splitlines()
    keep = _segment(ast.parse(source), name)
    comments: dict[str, str] = {}
    last = None
    for number in sorted(keep):
        line = lines[number - 1]
        match = pattern.match(line)
        if match:
            last = match.group(group)
            comments.setdefault(last, match.group("comment").strip())
        elif last is not None and line.strip().startswith("#"):
            comments[last] += " " + line.strip().lstrip("#").strip()
        else:
            last = None
    return comments


def _metric_description(name: str) -> str:
    registry, _ = _load("spare_gen.metrics.catalog:METRICS")
    metric = registry.get(name)
    if metric is None:
        return ""
    return f"metric, {metric.direction.value} is better (see the metric registry)"


def _arrow_rows(fields, comments: dict[str, str]) -> list[tuple]:
    rows = []
    for f in fields:
        doc = (f.metadata or {}).get(b"description", b"").decode()
        rows.append((f"`{f.name}`", f"`{f.type}`", doc or comments.get(f.name) or _metric_description(f.name)))
    return rows


def arrow_table(obj, module, name: str) -> str:
    comments = _source_comments(module, name, ARROW_COMMENT, "name")
    header = ("column", "type", "description")
    if isinstance(obj, dict):
        parts = [f"**{getattr(key, 'value', key)}**\n\n" + _table(header, _arrow_rows(fields, comments))
                 for key, fields in obj.items()]
        return "\n\n".join(parts)
    fields = list(obj) if isinstance(obj, (pa.Schema, list, tuple)) else None
    if fields is None:
        raise TypeError(f"not a pyarrow schema or list of fields: {type(obj).__name__}")
    return _table(header, _arrow_rows(fields, comments))


def _type_name(annotation) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " | ".join(f'`"{m.value}"`' for m in annotation)
    if origin in (list, tuple, dict):
        args = ", ".join(_type_name(a) for a in typing.get_args(annotation))
        return f"{origin.__name__}[{args}]"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(metadata) -> str:
    symbols = {annotated_types.Ge: (">=", "ge"), annotated_types.Gt: (">", "gt"), annotated_types.Le: ("<=", "le"),
               annotated_types.Lt: ("<", "lt")}
    parts = []
    for item in metadata:
        for cls, (symbol, attribute) in symbols.items():
            if isinstance(item, cls):
                bound = getattr(item, attribute)
                parts.append(f"{symbol} {bound:,}" if isinstance(bound, int) else f"{symbol} {bound}")
        if isinstance(item, annotated_types.MinLen):
            parts.append(f"at least {item.min_length} item(s)")
    return ", ".join(parts)


def _inner_bounds(annotation) -> str:
    """Bounds on the items of a list or the values of a dict (``list[Annotated[int, Field(ge=1)]]``)."""
    for arg in typing.get_args(annotation):
        if typing.get_origin(arg) is typing.Annotated:
            inner = [m for meta in typing.get_args(arg)[1:] for m in getattr(meta, "metadata", [meta])]
            text = _bounds(inner)
            if text:
                return "each " + text
    return ""


def _default(field) -> str:
    value = field.get_default(call_default_factory=True)
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, dict):
        value = {getattr(k, "value", k): v for k, v in value.items()}
    text = repr(value) if isinstance(value, str) else str(value)
    if isinstance(value, bool):
        text = str(value).lower()
    return text if len(text) <= 60 else text[:57] + "..."


def _config_rows(model: type[BaseModel], prefix: str) -> list[tuple]:
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows += _config_rows(annotation, key + ".")
            continue
        bounds = ", ".join(b for b in (_bounds(field.metadata), _inner_bounds(annotation)) if b)
        rows.append((f"`{key}`", _type_name(annotation), f"`{_default(field)}`", bounds, field.description or ""))
    return rows


def config_table(obj, module, name: str) -> str:
    if not (isinstance(obj, type) and issubclass(obj, BaseModel)):
        raise TypeError(f"not a pydantic model: {obj!r}")
    return _table(("key", "type", "default", "allowed", "description"), _config_rows(obj, ""))


def enum_table(obj, module, name: str) -> str:
    if not (isinstance(obj, type) and issubclass(obj, enum.Enum)):
        raise TypeError(f"not an Enum: {obj!r}")
    comments = _source_comments(module, name, ENUM_COMMENT, "member")
    return _table(("value", "meaning"), [(f"`{m.value}`", comments.get(m.name, "")) for m in obj])


def metrics_table(obj, module, name: str) -> str:
    rows = [(f"`{name}`", m.family, f"{m.direction.value} is better", "yes" if m.symmetric else "no")
            for name, m in obj.items()]
    return _table(("metric", "family", "direction", "symmetric"), rows)


def severities_table(obj, module, name: str) -> str:
    rows = []
    for kind, levels in obj.items():
        for severity, params in levels.items():
            values = params._asdict() if hasattr(params, "_asdict") else vars(params)
            rows.append((f"`{kind.value}`", f"`{severity.value}`", *values.values()))
    first = next(iter(next(iter(obj.values())).values()))
    names = tuple(first._asdict() if hasattr(first, "_asdict") else vars(first))
    return _table(("kind", "severity", *names), rows)


def _option_rows(parser: argparse.ArgumentParser) -> list[tuple]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.option_strings:
            names = ", ".join(f"`{o}`" for o in action.option_strings)
            if action.nargs != 0:
                names += f" `{action.metavar or action.dest.upper()}`"
        else:
            names = f"`{action.metavar or action.dest.upper()}`"
        default = "" if action.default in (None, False, [], "", argparse.SUPPRESS) or action.nargs == 0 else f"`{action.default}`"
        choices = f" (one of {', '.join(map(str, action.choices))})" if action.choices else ""
        rows.append((names, default, (action.help or "") + choices))
    return rows


def cli_reference(obj, module, name: str) -> str:
    """Per subcommand: its one-line help, usage and a table of its arguments, from the argparse tree."""
    parser = obj()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in sub._choices_actions}
    parts = []
    for command, subparser in sub.choices.items():
        usage = " ".join(subparser.format_usage().split()).removeprefix("usage: ")
        usage = textwrap.fill(usage, USAGE_WIDTH, subsequent_indent="    ", break_on_hyphens=False)
        parts.append(f"### spare-gen {command}\n\n{helps.get(command, '')}\n\n```text\n{usage}\n```\n\n"
                     + _table(("argument", "default", "meaning"), _option_rows(subparser)))
    return "\n\n".join(parts)


GENERATORS = {"cli": cli_reference, "arrow": arrow_table, "config": config_table, "enum": enum_table, "metrics": metrics_table,
              "severities": severities_table}


def render(markdown: str, where: str) -> str:
    """Every marker of ``markdown`` replaced by its table; ``where`` names the page in errors."""

    def replace(match: re.Match) -> str:
        kind, target = match.group("kind"), match.group("target")
        generator = GENERATORS.get(kind)
        if generator is None:
            raise PluginError(f"{where}: unknown generated table kind {kind!r} (known: {', '.join(GENERATORS)})")
        try:
            obj, module = _load(target)
            return generator(obj, module, target.split(":")[1])
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            raise PluginError(f"{where}: cannot generate {kind} table from {target}: {exc}") from None

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return render(markdown, page.file.src_uri)


def on_page_content(html: str, page, config, files) -> str:
    """Docstrings written for Sphinx: drop the role prefix (``:func:``) mkdocstrings leaves before the code."""
    return SPHINX_ROLE.sub("", html)
