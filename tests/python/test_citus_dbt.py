"""`dbt build --target postgres` on a Citus coordinator (issue 32 item 4): on the demo that
`rolemem init-db --demo` distributes, every model builds and every data test passes (none
skipped), and the marts that read players' rows answer as on a single PostgreSQL holding the
same demo. The marts that read every player's rows say so in YAML (meta gathers_across_shards)."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path
from typing import Any

import psycopg
import pytest

from rolemem.cli import main
from rolemem.schema.citus import PLAYER_TABLES

from .conftest import REPO, _dbt, demo_database
from .test_postgres_dbt import EMPTY_ON_THE_DEMO, rows_of

MODELS = {path.stem for path in (REPO / "models").rglob("*.sql")}
MARTS = sorted(path.stem for path in (REPO / "models" / "marts").rglob("*.sql"))


def dbt_postgres(url: str, work: Path, *args: str) -> dict[str, str]:
    """`dbt <args> --target postgres` against the database at `url`; each node's status."""
    parts = urllib.parse.urlsplit(url)
    socket = urllib.parse.parse_qs(parts.query).get("host")
    _dbt(
        "unused.duckdb",
        work,
        *args,
        "--target",
        "postgres",
        env={
            "ROLEMEM_PG_HOST": socket[0] if socket else str(parts.hostname),
            "ROLEMEM_PG_PORT": str(parts.port or 5432),
            "ROLEMEM_PG_USER": parts.username or "postgres",
            "ROLEMEM_PG_DBNAME": parts.path.lstrip("/"),
        },
    )
    results = json.loads((work / "target" / "run_results.json").read_text(encoding="utf-8"))
    return {result["unique_id"]: result["status"] for result in results["results"]}


@pytest.fixture(scope="module")
def citus_build(citus_cluster: Any, tmp_path_factory: Any) -> tuple[str, dict[str, str], Path]:
    url = citus_cluster.create_database("rolemem_citus_dbt")
    assert main(["init-db", "--db", url, "--demo"]) == 0
    work = tmp_path_factory.mktemp("citus-dbt")
    return str(url), dbt_postgres(url, work, "build"), work


def test_every_model_builds_and_every_test_passes_on_the_coordinator(citus_build):
    _, statuses, _ = citus_build
    models = {uid.split(".")[-1]: status for uid, status in statuses.items() if uid[:6] == "model."}
    assert models == dict.fromkeys(MODELS, "success")
    # every seed, hook and data test ran (none skipped): the one warning is the demo config's
    # size advice (a warn-only test), as on PostgreSQL and DuckDB
    assert {
        uid.split(".")[2]: status
        for uid, status in statuses.items()
        if status not in ("success", "pass")
    } == {"character_config_follows_the_size_advice": "warn"}


def test_the_player_tables_staging_is_gathered_into_coordinator_tables(citus_build):
    url, _, _ = citus_build
    with psycopg.connect(url) as con:
        kinds: dict[str, str] = dict(
            con.execute(
                "select table_name, table_type from information_schema.tables "
                "where table_schema = 'rolemem_dbt' and table_name like 'stg\\_app\\_\\_%'"
            ).fetchall()
        )
        # plain coordinator tables, not Citus tables: the walk and the joins run as PostgreSQL
        citus_kinds = con.execute(
            "select count(*) from citus_tables where table_name::text like 'rolemem_dbt.%'"
        ).fetchall()
    gathered = {name for name, kind in kinds.items() if kind == "BASE TABLE"}
    assert gathered == {
        *(path.stem for path in (REPO / "models" / "staging" / "app").glob("*.sql")),
    } - {"stg_app__roles"}
    assert {name for name, kind in kinds.items() if kind == "VIEW"} == {"stg_app__roles"}
    assert citus_kinds == [(0,)]


def test_the_marts_that_read_players_rows_say_they_gather_across_shards(citus_build):
    _, _, work = citus_build
    manifest = json.loads((work / "target" / "manifest.json").read_text(encoding="utf-8"))
    nodes, sources = manifest["nodes"], manifest["sources"]

    def reads_players(uid: str) -> bool:
        if uid in sources:
            return sources[uid]["name"] in PLAYER_TABLES
        return any(map(reads_players, nodes[uid].get("depends_on", {}).get("nodes", [])))

    marts = {
        node["name"]: node
        for uid, node in nodes.items()
        if node["resource_type"] == "model" and node["fqn"][1] == "marts"
    }
    marked = {name for name, node in marts.items() if node["meta"].get("gathers_across_shards")}
    assert marked == {name for name, node in marts.items() if reads_players(node["unique_id"])}
    assert "memory_messages" in marked and "character_unlock_matrix" not in marked


@pytest.fixture(scope="module")
def single_postgres(postgres_url: str, tmp_path_factory: Any) -> str:
    """The same demo on the test run's single PostgreSQL, its models and seeds built there (its
    data tests run in test_postgres_dbt)."""
    url = demo_database(postgres_url, "rolemem_citus_dbt_single")
    work = tmp_path_factory.mktemp("single-dbt")
    dbt_postgres(url, work, "build", "--resource-type", "model", "--resource-type", "seed")
    return url


# every mart, the demo's official memories (reference tables) included: the store summary
# counts them and the demo queries' recall ranks them with the player's, as on PostgreSQL
@pytest.mark.parametrize("mart", MARTS)
def test_a_mart_answers_as_on_one_postgresql(citus_build, single_postgres, mart):
    url, _, _ = citus_build
    with psycopg.connect(url, options="-c search_path=rolemem_dbt") as con:
        on_citus = rows_of(con.cursor(), mart)
    with psycopg.connect(single_postgres, options="-c search_path=rolemem_dbt") as con:
        on_postgres = rows_of(con.cursor(), mart)
    assert on_citus == on_postgres
    assert on_citus or mart in EMPTY_ON_THE_DEMO, f"{mart} has no rows on the demo"
