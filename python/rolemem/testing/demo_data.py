"""Demo dialogue for the embedded database: the spec's two examples as stored saves.

Save 1 is example 1 (钦灵's lines also carry role_id 1 so the batch mart has a target);
save 2 is example 2 plus a regenerated reply: a sibling of line 15 that is not on the branch
being played, so it must never show up in memory. Both belong to the demo player (the
user_id of data/dynamic_demo.json, mumu), whose memories are loaded too.
"""

from __future__ import annotations

import json
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from ..engines.sqlalchemy_engines import engine_for
from ..schema import Line, Role, Save, create_all, drop_all
from ..sql.project import write_sql


def _load_dynamic_demo(path: str) -> None:
    from datetime import datetime

    from ..dynamic_memory import DynamicMemory

    demo = _dynamic_demo()
    agent, user = demo["agent_id"], demo["user_id"]
    with DynamicMemory(path) as memory:
        memory.add_events(
            [
                {
                    **event,
                    "agent_id": agent,
                    "user_id": owner,
                    "scope": scope,
                    "created_at": datetime.fromisoformat(event["created_at"]),
                }
                for events, scope, owner in (
                    (demo["official_events"], "official", None),
                    (demo["events"], "user", user),
                )
                for event in events
            ]
        )
        for entity in demo["entities"]:
            memory.add_entity(
                **{**entity, "updated_at": datetime.fromisoformat(entity["updated_at"])},
                agent_id=agent,
                user_id=user,
                user_name=demo["user_name"],
            )
        # facts that changed (住址 南京 then 上海; 爱好 钢琴 ended by 游泳), stated at lines of
        # a demo save (`line`: its n-th line)
        for fact in demo["facts"]:
            lines = memory.store.run(
                "select line.id, line.save_id from line inner join save on save.id = line.save_id "
                "where save.name = $name order by line.id",
                {"name": fact["save"]},
            )
            line_id, save_id = lines[fact["line"] - 1]
            memory.add_fact(
                **{k: v for k, v in fact.items() if k not in ("save", "line")},
                agent_id=agent,
                user_id=user,
                save_id=save_id,
                line_id=line_id,
                created_at=datetime(2024, 5, 1, 20, 0),
            )


def _data(name: str) -> Any:
    """A JSON file of the package's data/."""
    return json.loads(resources.files("rolemem").joinpath(f"data/{name}").read_text("utf-8"))


def _dynamic_demo() -> dict[str, Any]:
    """The demo player's memories (and the demo player: its `user_id` owns the demo saves)."""
    return dict(_data("dynamic_demo.json"))


def spec_examples() -> dict[str, list[dict[str, Any]]]:
    return dict(_data("spec_examples.json"))


def _insert_save(session: Session, name: str, user_id: str, lines: list[dict[str, Any]]) -> Save:
    save = Save(name=name, user_id=user_id)
    session.add(save)
    session.flush()
    parent_id = None
    for spec_line in lines:
        fields = {key: value for key, value in spec_line.items() if key != "line_id"}
        if fields.get("script_role_id") is not None:
            fields["script_role_id"] = str(fields["script_role_id"])
        assert save.id is not None  # flushed above
        line = Line(**fields, save_id=save.id, user_id=user_id, parent_line_id=parent_id)
        session.add(line)
        session.flush()
        parent_id = line.id
    save.last_message_id = parent_id
    return save


def load_demo_into(db: str) -> int:
    """The demo into `db`: a DuckDB file (`load_demo`) or a PostgreSQL URL (the demo built in a
    scratch DuckDB file, then copied in; keys restart at 1). Returns how many rows were left
    out (`init_database`: none of the demo's, its official memories included, on Citus)."""
    from ..engines.postgres_setup import init_database, is_postgres_url

    if not is_postgres_url(db):
        load_demo(db)
        return 0
    with tempfile.TemporaryDirectory(prefix="rolemem-demo-") as scratch:
        path = str(Path(scratch) / "demo.duckdb")
        load_demo(path)
        return init_database(db, store=path)


def load_demo(path: str) -> None:
    """Recreate the application tables (keys restart at 1) and load the demo saves and the
    demo player memories into the DuckDB file `path`."""
    from ..memory_builder.history import WRITE_TIME_TABLES as HISTORY_TABLES
    from ..schema.memory import drop_memory_tables

    engine = engine_for(path)
    # memory tables first: SQLAlchemy drops every sequence of the metadata with the last
    # table set, and the memory tables' keys depend on theirs
    drop_memory_tables(engine)
    drop_all(engine)
    with engine.begin() as connection:
        for table in HISTORY_TABLES:  # write-time tables: rebuilt from the new lines
            connection.exec_driver_sql(write_sql("drop_table_if_exists", table))
    create_all(engine)
    _load_saves(engine)
    engine.dispose()
    _load_dynamic_demo(path)
    from ..character_memory import load_seeds_into

    load_seeds_into(path)  # the demo designer config and settings, as `dbt seed` would


def _load_saves(engine: sa.Engine) -> None:
    with Session(engine) as session:
        # role 1: the demo's turns use the qiyu config and the demo player's qiyu memories
        session.add(Role(name="钦灵", character_id="qiyu"))
        examples = spec_examples()
        player = _dynamic_demo()["user_id"]
        example_1 = [
            {**line, "role_id": 1} if line["attribute"] == "assistant" else line
            for line in examples["example_1"]
        ]
        _insert_save(session, "spec example 1", player, example_1)
        save_2 = _insert_save(session, "spec example 2", player, examples["example_2"])
        tip = session.get(Line, save_2.last_message_id)
        assert tip is not None and save_2.id is not None
        session.add(
            Line(
                content="才、才没有呢！",
                attribute="assistant",
                original_emotion="生气",
                role_id=1,
                display_name="钦灵",
                save_id=save_2.id,
                user_id=player,
                parent_line_id=tip.parent_line_id,
            )
        )
        # save 3: a character who was absent (钦灵 leaves to make tea while the player and
        # 白小喵 plan her birthday: present_role_ids, docs/memory_builder.md)
        _insert_save(session, "a character who was absent", player, _data("absent_scene.json"))
        session.commit()
