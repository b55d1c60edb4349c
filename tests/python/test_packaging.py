"""The wheel ships the dbt project: every folder of models/, macros/ and seeds/ is a package."""

from __future__ import annotations

import tomllib

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
