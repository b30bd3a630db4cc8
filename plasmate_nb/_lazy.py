"""PEP 562 lazy exports for the package ``__init__`` modules.

A package lists its public names and the modules defining them; each module is imported the
first time one of its names is read. So ``import plasmate_nb`` and the pure readers
(``load_trace``) start no browser code, no MCP SDK, no web server and no widgets.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable


def lazy_exports(
    package: str, exports: dict[str, tuple[str, ...]], submodules: Iterable[str] = ()
) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """``(__all__, __getattr__, __dir__)`` for ``package``.

    ``exports`` maps a module's full name to the public names it defines; ``submodules`` are
    public subpackages that ``package.<name>`` may import on first use.

    >>> __all__, __getattr__, __dir__ = lazy_exports(__name__, {"pkg.mod": ("Thing",)})
    """
    module_of = {name: module for module, names in exports.items() for name in names}
    public = sorted(module_of)
    known_submodules = frozenset(submodules)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> object:
        module = module_of.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif name in known_submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        names = set(public)
        for name, value in list(namespace.items()):
            if name.startswith("__") and name.endswith("__"):
                names.add(name)
            elif not name.startswith("_") and getattr(value, "__name__", None) == f"{package}.{name}":
                names.add(name)  # a public submodule that has been imported
        return sorted(names)

    return public, __getattr__, __dir__
