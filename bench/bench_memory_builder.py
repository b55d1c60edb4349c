"""Benchmark: memory builder (rolemem SQL) against the customer's own approach, same run.

    .venv/bin/python bench/bench_memory_builder.py [--saves 10000] [--lines-per-save 100]

(a) build_memory on 200- and 20,000-line histories; (b) build_memory_for_save for one 200-line
save inside a database of saves x lines-per-save lines; (c) the memory_messages model over the
whole database through `dbt run`, and its SQL alone on DuckDB, against the baseline over every
save. Prints a table; the baseline is bench/seed_baseline.py.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import sqlalchemy as sa
from duckdb_engine import ConnectionWrapper
from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_size import operator_count  # noqa: E402
from scratch import scratch_dir  # noqa: E402
from seed_baseline import build_messages, get_chat_history  # noqa: E402

from rolemem import DynamicMemory, build_memory, build_memory_for_save  # noqa: E402
from rolemem.memory_builder.build import _STORED_MESSAGES_SQL, _STORED_TIP_SQL  # noqa: E402
from rolemem.memory_builder.history import ensure_tables, refresh_history  # noqa: E402
from rolemem.sql.project import compose  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' synthetic dialogue
from tests.python.synthetic_dialogue import generate_dialogue  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def median_ms(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def row(name: str, ours: str, baseline: str, ratio: str, target: str) -> None:
    print(f"| {name:<46} | {ours:>12} | {baseline:>12} | {ratio:>8} | {target:<22} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--saves", type=int, default=10_000)
    parser.add_argument("--lines-per-save", type=int, default=100)
    args = parser.parse_args()
    tmp = scratch_dir("rolemem-bench-")
    path = str(tmp / "bench.duckdb")

    t_gen, _ = timed(lambda: _generate(path, args.saves, args.lines_per_save))
    total_lines = (args.saves - 1) * args.lines_per_save + 200
    print(f"generated {total_lines:,} lines in {args.saves:,} saves in {t_gen:.1f} s\n")

    # (a) reads a 20,000-line history from a database of its own
    with duckdb.connect() as scratch:
        generate_dialogue(scratch, saves=1, lines_per_save=20_000, seed=13)
        # the columns rolemem's SQLModel tables read, which the spec's tables lack
        ensure_tables(scratch)
        scratch.execute("alter table save add column if not exists user_name varchar")
        scratch_engine = sa.create_engine(
            "duckdb://", creator=lambda: ConnectionWrapper(scratch.cursor())
        )
        with Session(scratch_engine) as session:
            history = get_chat_history(session, 1)
        scratch_engine.dispose()

    con = duckdb.connect(path)
    # SQLModel (the baseline) shares the bench's DuckDB instance: one file, one configuration.
    engine = sa.create_engine("duckdb://", creator=lambda: ConnectionWrapper(con.cursor()))
    bench_save = args.saves
    row("case", "rolemem", "baseline", "ratio", "target")
    print("|---|---:|---:|---:|---|")
    for size in (200, 20_000):
        lines = history[:size]
        assert build_memory(lines, role_id=1) == build_messages(lines, role_id=1)
        ours, ours95 = median_ms(lambda lines=lines: build_memory(lines, role_id=1), 30)
        base, _ = median_ms(lambda lines=lines: build_messages(lines, role_id=1), 30)
        row(
            f"(a) build_memory, {size:,} lines (median)",
            f"{ours:.2f} ms",
            f"{base:.2f} ms",
            f"{base / ours:.2f}x",
            "≤ 8x the loop" if size == 200 else "",
        )

    def baseline_save() -> object:
        with Session(engine) as session:
            return build_messages(get_chat_history(session, bench_save), role_id=1)

    # the first read builds the save's write-time rows; later reads are point reads
    assert build_memory_for_save(con, bench_save, role_id=1) == baseline_save()
    ours, ours95 = median_ms(lambda: build_memory_for_save(con, bench_save, role_id=1), 50)
    base, _ = median_ms(baseline_save, 50)
    operators = operator_count(con.cursor(), _STORED_TIP_SQL, {"save_id": bench_save}) + (
        operator_count(
            con.cursor(),
            _STORED_MESSAGES_SQL,
            {"save_id": bench_save, "target_key": "role_id=1"},
        )
    )
    row(
        f"(b) build_memory_for_save, 200 of {total_lines / 1e6:.2f}M lines",
        f"{ours:.2f} ms",
        f"{base:.2f} ms",
        f"{base / ours:.2f}x",
        "≥ 3x faster",
    )
    row(
        f"    (b) p95 (p95/p50 {ours95 / ours:.2f}); {operators} operators",
        f"{ours95:.2f} ms",
        "",
        "",
        "p95/p50 ≤ 2",
    )

    # (b') upkeep: one line appended to that save (the game writes it), then its rows refreshed;
    # baseline: the same save rebuilt whole (the only path before appends had their own)
    appended, rebuilt = upkeep_ms(con, bench_save, 30)
    assert build_memory_for_save(con, bench_save, role_id=1) == baseline_save()
    with duckdb.connect() as long_save:
        generate_dialogue(long_save, saves=1, lines_per_save=2_000, seed=5)
        long_appended, long_rebuilt = upkeep_ms(long_save, 1, 30)
    for label, ours_ms, base_ms in (
        ("(b') upkeep after one appended line (p50)", appended, rebuilt),
        ("(b'') same, a 2,000-line save (own db, p50)", long_appended, long_rebuilt),
    ):
        ours, base = statistics.median(ours_ms), statistics.median(base_ms)
        row(label, f"{ours:.2f} ms", f"{base:.2f} ms", f"{base / ours:.2f}x", "p50 ≤ 25 ms")
    row("    (b') p95", f"{appended[int(len(appended) * 0.95) - 1]:.2f} ms", "", "", "")

    sql = compose(
        "memory_messages",
        {
            "source_line": "select * from line",
            "source_save": "select * from save",
            "source_role": "select * from role",
        },
        "select * from memory_messages",
        {"context_emotion": True},
    )
    # materialise every column, as the dbt table does, so nothing is optimised away
    t_sql, _ = timed(lambda: con.execute("create temp table bench_messages as " + sql))
    (message_count,) = con.execute("select count(*) from bench_messages").fetchone()

    env = {**os.environ, "ROLEMEM_DB": path, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    dbt = [
        str(Path(sys.executable).with_name("dbt")),
        "run",
        "--quiet",
        "--select",
        "+memory_messages",
        "--profiles-dir",
        str(REPO),
        "--project-dir",
        str(REPO),
        "--target-path",
        str(tmp / "target"),
    ]

    def baseline_all(engine: sa.Engine) -> int:
        count = 0
        with Session(engine) as session:
            for save_id in range(1, args.saves + 1):
                lines = get_chat_history(session, save_id)
                for target in ({"role_id": 1}, {"role_id": 2}, {"script_role_id": "1"}):
                    count += len(build_messages(lines, **target))
        return count

    t_base, base_count = timed(lambda: baseline_all(engine))
    engine.dispose()
    con.close()  # dbt opens the file itself
    t_dbt, _ = timed(lambda: subprocess.run(dbt, check=True, env=env, cwd=REPO))
    # dbt's own start-up (parse, connection, on-run-start hooks): the same command selecting
    # no model
    nothing = [*dbt[:4], "tag:rolemem_bench_selects_nothing", *dbt[5:]]
    t_startup, _ = timed(
        lambda: subprocess.run(nothing, check=True, env=env, cwd=REPO, capture_output=True)
    )

    row(
        f"(c) memory_messages SQL, all {args.saves:,} saves",
        f"{t_sql:.2f} s",
        f"{t_base:.2f} s",
        f"{t_base / t_sql:.1f}x",
        "(batch, one run)",
    )
    row(
        "(c) dbt run +memory_messages (incl. start-up)",
        f"{t_dbt:.2f} s",
        "",
        "",
        "",
    )
    row("    (c) dbt start-up alone (no model selected)", f"{t_startup:.2f} s", "", "", "")
    row(
        "    (c) dbt run minus start-up vs the SQL outside dbt",
        f"{t_dbt - t_startup:.2f} s",
        f"{t_sql:.2f} s",
        f"{t_sql / (t_dbt - t_startup):.2f}x",
        "dbt start-up apart",
    )
    print(f"\nmessages: SQL {message_count:,}, baseline {base_count:,}")
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak_child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: bench process {peak_self:.0f} MiB, dbt {peak_child:.0f} MiB (target ≤ 2048)")


def upkeep_ms(
    con: duckdb.DuckDBPyConnection, save_id: int, runs: int
) -> tuple[list[float], list[float]]:
    """Append a line to the save `runs` times (as the game would); time the refresh after
    each, then a rebuild of the whole save (its recorded tip forgotten). Sorted ms each."""
    appended, rebuilt = [], []
    refresh_history(con, [save_id])
    for n in range(runs):
        (tip,) = con.execute("select last_message_id from save where id = ?", [save_id]).fetchone()
        (new_id,) = con.execute(
            """insert into line (id, content, attribute, role_id, save_id, parent_line_id)
            select max(id) + 1, ?, 'user', null, ?, ? from line returning id""",
            [f"追加第{n}句", save_id, tip],
        ).fetchone()
        con.execute("update save set last_message_id = ? where id = ?", [new_id, save_id])
        start = time.perf_counter()
        refresh_history(con, [save_id])
        appended.append((time.perf_counter() - start) * 1000)
        con.execute("delete from int_save_history_tips where save_id = ?", [save_id])
        start = time.perf_counter()
        refresh_history(con, [save_id])
        rebuilt.append((time.perf_counter() - start) * 1000)
    return sorted(appended), sorted(rebuilt)


def _generate(path: str, saves: int, lines_per_save: int) -> None:
    """saves - 1 saves of lines_per_save lines, then the 200-line save that (b) reads."""
    with duckdb.connect(path) as con:
        generate_dialogue(con, saves=saves - 1, lines_per_save=lines_per_save)
        generate_dialogue(
            con,
            saves=1,
            lines_per_save=200,
            first_save_id=saves,
            first_line_id=(saves - 1) * lines_per_save + 1,
            seed=11,
        )
        DynamicMemory(con, embedder=None).close()  # the rest of the tables, as init-db makes
        con.execute(  # the game's role table (the chain names speakers from it), empty
            "create table if not exists role "
            "(id bigint primary key, name varchar, character_id varchar, agent_id varchar)"
        )


if __name__ == "__main__":
    main()
