"""The wheel ships the dbt project: every folder of models/, macros/ and seeds/ is a package."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata

from .conftest import REPO


def test_every_project_folder_is_listed_as_a_package():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = set(config["tool"]["setuptools"]["packages"])
    roots = {
        "models": "rolemem._models",
        "macros": "rolemem._macros",
        "seeds": "rolemem._seeds",
        "python/rolemem": "rolemem",
    }
    expected = set()
    for folder, package in roots.items():
        base = REPO / folder
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and path.name != "__pycache__":
                parts = path.relative_to(base).parts
                expected.add(".".join([package, *parts]))
    assert expected == packages


# the files setuptools' build_py puts in the wheel (what `pip wheel` packs), computed offline
_WHEEL_FILES = """
import json, os, warnings
from setuptools.config.pyprojecttoml import apply_configuration
from setuptools.dist import Distribution
warnings.simplefilter("ignore")
dist = Distribution()
dist.script_name = "setup.py"
apply_configuration(dist, "pyproject.toml")
build = dist.get_command_obj("build_py")
build.ensure_finalized()
print(json.dumps([
    os.path.relpath(os.path.join(target, name), build.build_lib)
    for _, _, target, names in build.data_files
    for name in names
]))
"""


def test_the_wheel_ships_the_macros_of_every_folder():
    found = subprocess.run(
        [sys.executable, "-c", _WHEEL_FILES], cwd=REPO, capture_output=True, text=True, check=True
    )
    files = set(json.loads(found.stdout.splitlines()[-1]))
    for path in (
        "_macros.yml",
        "cross_db/json_text.sql",
        "rules/fill_name_placeholders.sql",
        "setup/create_rolemem_raise.sql",
        "writes/insert_role.sql",
        "writes/_writes.yml",
    ):
        assert f"rolemem/_macros/{path}" in files
    shipped = {path for path in files if path.startswith("rolemem/_macros/")}
    assert len(shipped) == len(list((REPO / "macros").rglob("*.*")))


def test_serve_flags_take_their_defaults_from_the_settings_without_the_service_extra():
    # the CLI is installed without the service extra too: its --help must still build
    code = """
import sys
for name in ("fastapi", "uvicorn", "starlette", "prometheus_client", "mcp"):
    sys.modules[name] = None  # importing them raises ImportError, as when not installed
from rolemem.cli.main import _parser
from rolemem.service.core.settings import ServiceSettings, from_flags
settings = from_flags(_parser().parse_args(["serve", "--max-batch", "7"]))
assert settings.max_body_bytes == ServiceSettings().max_body_bytes, settings.max_body_bytes
assert settings.webhook_backoff == ServiceSettings().webhook_backoff, settings.webhook_backoff
assert settings.max_batch == 7, settings.max_batch
assert not any(name in sys.modules and sys.modules[name] for name in ("fastapi", "uvicorn"))
"""
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


# the packages of the in-process API (rolemem.DynamicMemory, MemoryLoop, Companion ...),
# the top-level modules, and the embedded engine (not PostgreSQL's, nor dbt's plugin)
_IN_PROCESS = (
    "character_memory",
    "dynamic_memory",
    "memory_builder",
    "memory_loop",
    "schema",
    "sql",
    "text",
    "turn",
)
_ENGINES_ELSEWHERE = {"postgres.py", "postgres_setup.py", "dbt_plugin.py"}


def _distribution(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _optional_imports(tree: ast.AST) -> set[int]:
    """The import nodes a module may lack: tried with an ImportError handler or under
    `contextlib.suppress(ImportError)`, or for the type checker only (`if TYPE_CHECKING:`)."""
    missing = ("ImportError", "ModuleNotFoundError")
    bodies = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(handler.type, ast.Name) and handler.type.id in missing
            for handler in node.handlers
        ):
            bodies.append(node.body)
        elif isinstance(node, ast.With) and any(
            isinstance(item.context_expr, ast.Call)
            and ast.unparse(item.context_expr.func).endswith("suppress")
            and any(ast.unparse(arg) in missing for arg in item.context_expr.args)
            for item in node.items
        ):
            bodies.append(node.body)
        elif isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            bodies.append(node.body)
    return {id(inner) for body in bodies for statement in body for inner in ast.walk(statement)}


def _imported(tree: ast.AST) -> list[str]:
    """The top-level names of the absolute imports a module needs."""
    optional = _optional_imports(tree)
    names = []
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return names


def test_the_in_process_api_imports_only_what_a_plain_install_brings():
    """`pip install rolemem` with no extra runs the in-process API: every module its packages
    import comes with a base dependency (or with one of theirs). sqlglot once came only with
    the postgres extra, and a plain install could not compose a statement."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    base = {_distribution(r) for r in config["project"]["dependencies"]}
    provided = set(base)
    for name in base:
        provided |= {_distribution(r) for r in metadata.requires(name) or [] if "extra ==" not in r}
    owners = metadata.packages_distributions()
    package = REPO / "python" / "rolemem"
    paths = [
        *(path for folder in _IN_PROCESS for path in (package / folder).rglob("*.py")),
        *package.glob("*.py"),
        *(p for p in (package / "engines").glob("*.py") if p.name not in _ENGINES_ELSEWHERE),
    ]
    missing: dict[str, set[str]] = {}
    for path in paths:
        for top in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            if top in sys.stdlib_module_names or top == "rolemem":
                continue
            if not {_distribution(d) for d in owners.get(top, [top])} & provided:
                missing.setdefault(top, set()).add(str(path.relative_to(REPO)))
    assert missing == {}
