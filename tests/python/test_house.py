"""The package's layout rules, read from the source with `ast`: no import cycle between rolemem's
modules, no private name imported across packages, a short top level; and, over the imported
package, classes composed rather than chained (no class inherits through more than two of
rolemem's own)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from .conftest import REPO

PACKAGE = REPO / "python" / "rolemem"
MAX_TOP_LEVEL = 18


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, tuple[Path, ast.Module]]:
    return {
        _module_name(path): (path, ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts
    }


SOURCES = _sources()
MODULES = set(SOURCES)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run: at module level and inside functions, not the ones under
    `if TYPE_CHECKING:` (annotations only)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for orelse in child.orelse:
                yield from _runtime_imports(orelse)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _runtime_imports(child)


def _resolved(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    is_package = SOURCES[module][0].name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports(module: str) -> Iterator[tuple[str, str]]:
    """(imported rolemem module, name taken from it or "") for each import of `module`."""
    for node in _runtime_imports(SOURCES[module][1]):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
            continue
        source = _resolved(module, node)
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            if submodule in MODULES:
                yield submodule, ""
            else:
                yield source, alias.name


def _package(module: str) -> str:
    """The package a module belongs to: rolemem.<folder>, or rolemem for the top level."""
    parts = module.split(".")
    if len(parts) > 1 and f"rolemem.{parts[1]}" in MODULES and (PACKAGE / parts[1]).is_dir():
        return f"rolemem.{parts[1]}"
    return "rolemem"


def _import_graph() -> dict[str, set[str]]:
    """module -> the modules importing it runs: the imported module and the packages above it
    that the importer is not already inside (their __init__ runs first)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module in MODULES:
        own = module.split(".")
        for target, _name in _imports(module):
            if target not in MODULES:
                continue
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):
                runs = ".".join(parts[:depth])
                if runs != module and runs in MODULES and own[:depth] != parts[:depth]:
                    graph[module].add(runs)
            if target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_modules():
    assert _cycles(_import_graph()) == []


def test_the_sql_runner_imports_no_capability():
    allowed = {"rolemem", "rolemem.sql"}
    crossing = sorted(
        f"{module} imports {target}"
        for module in MODULES
        if _package(module) == "rolemem.sql"
        for target, _name in _imports(module)
        if target.startswith("rolemem.") and _package(target) not in allowed
    )
    assert crossing == []


def test_no_private_name_is_imported_across_packages():
    crossing = []
    for module in sorted(MODULES):
        for target, name in _imports(module):
            if not target.startswith("rolemem") or _package(target) == _package(module):
                continue
            private = [part for part in [*target.split("."), name] if part.startswith("_")]
            private = [part for part in private if not part.startswith("__")]
            if private:
                shown = f"{target}.{name}" if name else target
                crossing.append(f"{module} imports {shown}")
    assert crossing == []


def test_the_top_level_stays_short():
    entries = sorted(path.name for path in PACKAGE.iterdir() if path.name != "__pycache__")
    assert len(entries) <= MAX_TOP_LEVEL, entries


def _unit(module: str) -> str:
    """A package (rolemem.<folder>) or a top-level module (rolemem.errors, rolemem itself)."""
    package = _package(module)
    return package if package != "rolemem" else module


def test_no_import_cycle_between_packages():
    """Grouped by package, imports still run one way: e.g. the engines never import a capability
    or the schema back, and the test helpers are imported by nothing in the library but the CLI's
    demo command."""
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        graph.setdefault(_unit(module), set())
        for target, _name in _imports(module):
            if target in MODULES and _unit(target) != _unit(module):
                graph[_unit(module)].add(_unit(target))
    assert _cycles(graph) == []


def _chain(cls: type) -> int:
    """How many of rolemem's classes `cls` inherits through along its longest line of bases (an
    error type of two kinds, each a RolememError, is two lines of two, not a chain of three)."""
    own = [base for base in cls.__bases__ if base.__module__.startswith("rolemem")]
    return max((1 + _chain(base) for base in own), default=0)


def test_no_class_inherits_through_more_than_two_of_the_projects_classes():
    """Parts are held, not mixed in (DynamicMemory and MemoryLoop hold theirs)."""
    import importlib
    import inspect

    chained = sorted(
        f"{cls.__module__}.{cls.__qualname__} ({_chain(cls)})"
        for module in sorted(MODULES)
        if not module.endswith("__main__")  # runs the CLI
        for _, cls in inspect.getmembers(importlib.import_module(module), inspect.isclass)
        if cls.__module__ == module and _chain(cls) > 2
    )
    assert chained == []
