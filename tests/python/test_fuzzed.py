"""The live service fuzzed by a tool nobody here wrote: schemathesis (the registry's CLI) reads
/openapi.json and sends what it generates, valid and not, to the service under uvicorn on
DuckDB and on PostgreSQL. Bounded in examples, deterministic. Every check holds: no 5xx,
every answer's status, headers, content type and body as declared, `Allow` on 405s, every
schema-violating request refused and every schema-valid one accepted, missing headers and
unsupported methods refused, deleted resources gone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rolemem.service.core.settings import ServiceSettings

from .conftest import scripted_game

CHECKS = "all"
# The coverage phase walks every optional field of the designer imports' entries (of three
# kinds, of three lorebook layouts): minutes each. They keep the other phases (their examples,
# fuzzed and stateful cases), every check on.
CONFIG = """
[[operations]]
include-path-regex = "^/config/import"
phases.coverage.enabled = false
"""


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def game(request, tmp_path_factory):
    with scripted_game(
        request, tmp_path_factory, "rolemem_fuzzed", settings=ServiceSettings()
    ) as served:
        yield served


def _st() -> str:
    found = Path(sys.executable).with_name("st")
    if found.exists():
        return str(found)
    return shutil.which("st") or pytest.skip("schemathesis (st) is not installed")


def test_no_5xx_and_every_answer_as_declared(game, tmp_path):
    client, _, _ = game
    base = str(client.base_url).rstrip("/")
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG, encoding="utf-8")
    deadline = time.monotonic() + 60
    while client.get("/ready").status_code != 200:  # warm: the first recall has run
        assert time.monotonic() < deadline
        time.sleep(0.1)
    run = subprocess.run(
        [
            _st(),
            "--config-file",
            str(config),
            "run",
            f"{base}/openapi.json",
            "--checks",
            CHECKS,
            "--max-examples",
            "5",
            "--seed",
            "1",
            "--generation-deterministic",
            "--workers",
            "1",
            "--request-timeout",
            "60",
            # schemathesis has no serializer for application/x-ndjson (the import's bodies are
            # walked by test_service_contract instead)
            "--exclude-path",
            "/saves/{save_id}/import",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,  # its cache folder (.schemathesis) goes there, not into the checkout
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
