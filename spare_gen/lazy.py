"""A package's public names imported when first used (PEP 562), so that a command needing one part of a package,
or only its help, does not import what the rest of the package needs (scipy, scikit-learn, matplotlib, torch)."""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_exports(package: str, modules: dict[str, tuple[str, ...]]
                 ) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``, whose public names live in its submodules as
    ``modules`` lists them (submodule name -> its public names)."""
    namespace = importlib.import_module(package).__dict__
    homes = {name: f"{package}.{module}" for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(homes[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(homes))

    return sorted(homes), __getattr__, __dir__
