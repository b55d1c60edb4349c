"""`ROLEMEM_DB=postgresql://… bash scripts/demo.sh`: the demo on a PostgreSQL database (init-db,
dbt build on the postgres target, the builder over the game's tables there) prints the spec's
example 2 as the README shows it; the game's next rows get fresh keys."""

from __future__ import annotations

import json
import os
import re
import subprocess

import psycopg
import pytest
import sqlalchemy as sa
from sqlmodel import Session

from rolemem.cli import main
from rolemem.engines.postgres_setup import dbt_environment
from rolemem.schema import Line, Save

from .conftest import REPO


def readme_example_2() -> list[dict[str, str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"the spec's example 2:\n\n```json\n(.*?)```", readme, re.S)
    assert block, "the README shows example 2"
    return json.loads(block.group(1))


@pytest.fixture(scope="module")
def game_url(postgres_url):
    with psycopg.connect(postgres_url, autocommit=True) as con:
        con.execute("drop database if exists rolemem_demo")
        con.execute("create database rolemem_demo")
    return postgres_url.replace("/postgres?", "/rolemem_demo?")


@pytest.mark.skipif(
    not (REPO / ".venv" / "bin" / "python").exists(), reason="demo.sh runs in the repo's .venv"
)
def test_the_demo_on_postgresql_prints_example_2(game_url, tmp_path):
    done = subprocess.run(
        ["bash", "scripts/demo.sh"],
        cwd=REPO,
        env={
            **os.environ,
            "ROLEMEM_DB": game_url,
            # dbt's own files go to the test's directory, not the repo's target/
            "DBT_TARGET_PATH": str(tmp_path / "target"),
            "DBT_LOG_PATH": str(tmp_path / "logs"),
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stdout[done.stdout.index("[") :]
    assert json.loads(printed) == readme_example_2()
    # the game goes on writing its own rows: keys continue after the demo's
    engine = sa.create_engine(game_url.replace("postgresql://", "postgresql+psycopg://"))
    with Session(engine) as session:
        keys = session.execute(sa.text("select (select max(id) from save), max(id) from line"))
        last_save, last_line = keys.one()
        save = Save(name="a new save")
        session.add(save)
        session.flush()
        line = Line(save_id=save.id, attribute="user", content="你好")
        session.add(line)
        session.commit()
        assert (save.id, line.id) == (last_save + 1, last_line + 1) == (4, 33)
    engine.dispose()


def test_commands_of_the_embedded_file_say_so_on_a_url(capsys):
    url = "postgresql://postgres:@/nowhere?host=/nonexistent"
    assert main(["query", "--db", url, "--user", "u", "--agent", "a", "你好"]) == 2
    assert "runs on the embedded DuckDB file" in capsys.readouterr().err


def test_dbt_reads_the_url_as_profiles_yml_variables():
    assert dbt_environment("postgresql://game:s%40cret@db.example:6543/play") == {
        "ROLEMEM_PG_HOST": "db.example",
        "ROLEMEM_PG_PORT": "6543",
        "ROLEMEM_PG_USER": "game",
        "ROLEMEM_PG_PASSWORD": "s@cret",
        "ROLEMEM_PG_DBNAME": "play",
    }
    socket = dbt_environment("postgresql://postgres:@/postgres?host=/tmp/pg")
    assert socket["ROLEMEM_PG_HOST"] == "/tmp/pg"
    assert socket["ROLEMEM_PG_PORT"] == "5432"
