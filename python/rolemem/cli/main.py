"""Command line: `rolemem <command>` (`rolemem --help` lists them). Errors are one line and exit
code 2; `--verbose` shows the library logs."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..engines import duckdb_connect
from ..engines.postgres_setup import init_database, is_postgres_url
from ..errors import RolememError
from . import import_chat, mcp_stdio
from .progress import progress_bar, stage_bars

_DB_HELP = "DuckDB file (default: $ROLEMEM_DB or ./rolemem.duckdb)"
# the options several commands share, each with one help text (--param's is each
# command's own: _add takes it as a (flag, help) pair)
_OPTIONS: dict[str, dict[str, Any]] = {
    "--db": {"help": _DB_HELP},
    "--character": {"required": True, "help": "character_id in the config"},
    "--save": {"type": int, "required": True, "help": "save id"},
    "--user": {"required": True, "help": "user_id"},
    "--agent": {"required": True, "help": "agent_id"},
    "--role": {"type": int, "help": "the character's role_id"},
    "--script-role": {"help": "the character's script_role_id"},
    "--now": {"help": "ISO time (default: now)"},
    "--llm-base-url": {"help": "OpenAI-compatible base URL (.../v1)"},
    "--llm-model": {"help": "model name"},
    "--param": {"action": "append", "default": [], "metavar": "FIELD=VALUE"},
}


def _add(parser: Any, *flags: str | tuple[str, str]) -> None:
    """The shared options `flags` names, in that order; a (flag, help) pair: the option with
    this command's own help."""
    for flag in flags:
        name, text = flag if isinstance(flag, tuple) else (flag, _OPTIONS[flag]["help"])
        parser.add_argument(name, **{**_OPTIONS[name], "help": text})


def _switch(parser: Any, flag: str, text: str) -> None:
    """An on/off option (off unless given)."""
    parser.add_argument(flag, action="store_true", help=text)


def _version() -> str:
    """rolemem's installed version (`--version`, the MCP server's)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rolemem")
    except PackageNotFoundError:
        return "unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rolemem", description="Memory for LLM role-play characters (DuckDB + dbt models)."
    )
    parser.add_argument("--version", action="version", version=f"rolemem {_version()}")
    parser.add_argument("--verbose", action="store_true", help="log what rolemem does to stderr")
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser(
        "init-db",
        help="create the application tables in the embedded DuckDB file (or a PostgreSQL "
        "database: --db postgresql://…)",
    )
    init.add_argument("--db", help=_DB_HELP + "; or a postgresql:// URL")
    _switch(init, "--demo", "drop and reload the demo saves (the spec's two examples)")
    init.add_argument(
        "--copy-from",
        metavar="PATH",
        help="PostgreSQL only: drop and reload rolemem's tables with the rows of this embedded "
        "DuckDB store (saves, config, memories and their vectors)",
    )

    memory = commands.add_parser(
        "memory",
        help="print one character's chat memory for a save as JSON",
        description="Walk the save's current branch and render it from one character's point "
        "of view as OpenAI-style messages. Give at least one of --role, --script-role, --name.",
    )
    memory.add_argument(
        "--db", help=_DB_HELP + "; or a postgresql:// URL (the game's own database)"
    )
    _add(memory, "--save", "--role")
    memory.add_argument("--script-role", help="the character's script_role_id (script NPC)")
    memory.add_argument("--name", help="the character's display_name")
    _switch(
        memory, "--no-context-emotion", "omit 【emotion】 from other speakers' background lines"
    )

    recall = commands.add_parser(
        "recall",
        help="recall a character's configured memory for one player input",
        description="Fill {{character_memory_attributes}}, {{character_memory_event}} and "
        "{{character_dialogue_style}} for one input under a game context; prints JSON.",
    )
    _add(recall, "--character")
    recall.add_argument("--text", required=True, help="the player's input")
    _add(
        recall,
        (
            "--param",
            'context field, repeatable; VALUE is JSON if it parses (2, ["a","b"], true) else text',
        ),
    )
    _switch(recall, "--all-unlocked", "recall every unlocked entry, relevant or not")
    recall.add_argument("--user-name", help="player name ({{user}}; never a recall word)")
    recall.add_argument("--char-name", help="character name ({{char}}; never a recall word)")
    _switch(recall, "--explain", "add why each entry is shown")
    recall.add_argument(
        "--db", help="DuckDB file with the dbt seeds (default: the shipped demo config)"
    )

    query = commands.add_parser(
        "query",
        help="recall a player's memories (events and entities) for a text",
        description="Hybrid recall over the player's and the agent's official memories; "
        "prints the QueryResponse (and the prompt text) as JSON.",
    )
    query.add_argument("text", help="the character's last reply + the player's input")
    _add(query, "--user", "--agent")
    query.add_argument("--limit", type=int, default=5)
    query.add_argument(
        "--threshold",
        type=float,
        help="drop memories scoring below this (0-1; default: the evidence gate alone)",
    )
    query.add_argument("--now", help="ISO time to recall at (default: now)")
    query.add_argument("--user-name", help="player name (never a recall word)")
    query.add_argument("--agent-name", help="agent name (never a recall word)")
    query.add_argument("--save", type=int, help="the save being played (branch-aware recall)")
    _switch(query, "--keyword-only", "no embedder (default: the bundled multilingual-e5-small)")
    _switch(
        query,
        "--update",
        "count this recall (strength +15, recall_count); off by default here, so looking never "
        "changes the store",
    )
    _add(query, "--db")

    _loop_commands(commands)
    import_chat.add_parser(commands, _DB_HELP + ", or a postgresql:// URL")
    mcp_stdio.add_parser(commands, _DB_HELP + ", or a postgresql:// URL")

    snapshot = commands.add_parser(
        "snapshot",
        help="a consistent read-only copy of the database for analysts and dbt",
        description="With --url, ask the running service (the file's owner) to write its "
        "snapshot; else open the file (no other process may hold it) and copy it to --out.",
    )
    _add(snapshot, "--db")
    snapshot.add_argument("--out", help="where to write the copy (without --url)")
    snapshot.add_argument("--url", help="the service, e.g. http://127.0.0.1:8000")
    snapshot.add_argument("--api-key", help="X-API-Key for the service ($ROLEMEM_API_KEY)")

    serve = commands.add_parser(
        "serve",
        help="the HTTP service (FastAPI + uvicorn): the one owner of the DuckDB file, or "
        "processes sharing a PostgreSQL database",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""The HTTP service a game server calls; it owns the DuckDB file (one
process), or serves a PostgreSQL database (--db postgresql://…) from --workers processes (or
several hosts), the game writing its own saves and lines there too.

Routes (OpenAPI at /docs and /redoc, offline):
  saves            POST /roles, POST /saves, GET /saves/{id}, GET|POST /saves/{id}/lines,
                   POST /lines, POST /saves/{id}/regenerate, PUT /saves/{id}/tip,
                   GET /saves/{id}/memory_status
  turn             POST /turn
  recall           POST /query, /query_simple, /expand_words, /recall
  player memories  GET /users/{id}/memories|timeline|archive|export,
                   PATCH|DELETE /users/{id}/memories/{kind}/{memory_id}, POST /users/{id}/forget
  designers        GET /official/{agent}, POST /official/import|events|entities,
                   PATCH|DELETE /official/{kind}/{id}, POST /config/import, GET /config/{id},
                   POST /recall_preview
  service          GET /health, /ready (no key), GET /status, POST /snapshot,
                   POST /admin/maintenance, /admin/webhooks/replay
  MCP              /mcp: the tools of `rolemem mcp` over streamable HTTP, keyed as above

Keys: X-API-Key is --api-key (or $ROLEMEM_API_KEY) on every route but the probes; designer
routes take --designer-key when set. --keys FILE adds named keys, each with a role (game,
designer, admin) and optionally the players it may name (a glob), read again within 2 s of a
change. --player-rate and --key-rate limit requests per player and per key (429), in each
process. The LLM for extraction: --llm-base-url/--llm-model or ROLEMEM_LLM_* (none: lines are
stored, not extracted).""",
    )
    from ..service.core.settings import add_flags

    add_flags(serve)

    explain = commands.add_parser(
        "explain",
        help="one turn's prompt and why each piece is there, as a table",
        description="Assemble the reply prompt for a save (Companion.turn, nothing written) "
        "and print every item that went in or was left out: layer, status, why.",
    )
    _add(explain, "--db", "--character")
    explain.add_argument("--agent", help="agent_id of the dynamic memories (default: character)")
    _add(explain, "--save", "--user", "--role", "--script-role")
    explain.add_argument("--message", required=True, help="the player's new message")
    _add(explain, ("--param", "game context (queryParams), repeatable"), "--now")
    _switch(explain, "--keyword-only", "no embedder")
    _switch(explain, "--messages", "also print the messages")

    official = commands.add_parser(
        "official", help="import/export an agent's official (designer) memories as JSON"
    )
    official_commands = official.add_subparsers(dest="official_command", required=True)
    official_import = official_commands.add_parser(
        "import", help="add official memories from a JSON file (all or nothing; progress shown)"
    )
    official_import.add_argument("file", help="JSON as `official export` writes it")
    _add(official_import, "--db")
    _switch(official_import, "--keyword-only", "no vectors (default: the bundled e5 embedder)")
    official_export = official_commands.add_parser("export", help="print an agent's as JSON")
    official_export.add_argument("--agent", required=True)
    _add(official_export, "--db")

    config = commands.add_parser("config", help="import/export designer JSON")
    config_commands = config.add_subparsers(dest="config_command", required=True)
    importer = config_commands.add_parser(
        "import",
        help="designer JSON files -> the database's config tables (--db) or CSVs (--out); "
        "validated, nothing written on error",
        description="With --db, each character's rows in the database are replaced in one "
        "transaction (the service and dbt read them; `dbt build` never replaces them). With "
        "--out, the three config CSVs are written for version control (`config load` reads "
        "them).",
    )
    importer.add_argument("files", nargs="+", help="designer JSON files, one per character")
    importer.add_argument(
        "--from",
        dest="source_format",
        choices=("rolemem", "sillytavern"),
        default="rolemem",
        help="sillytavern: World Info files or character cards V2/V3 (--character names "
        "whose each file is); fields with no meaning here are reported on stderr",
    )
    importer.add_argument("--character", help="character_id of a SillyTavern file's entries")
    importer.add_argument(
        "--json",
        help="also write the converted designer JSON here (one file): it carries the "
        "SillyTavern fields, so `config export --to sillytavern --json` gives the file back",
    )
    target = importer.add_mutually_exclusive_group(required=True)
    _add(target, "--db")
    target.add_argument("--out", help="folder for the three config CSVs")
    exporter = config_commands.add_parser("export", help="config -> designer JSON")
    exporter.add_argument("--character")
    exporter.add_argument(
        "--to",
        dest="target_format",
        choices=("rolemem", "sillytavern"),
        default="rolemem",
        help="sillytavern: a World Info file (or the card/book a --json file came from)",
    )
    source = exporter.add_mutually_exclusive_group()
    source.add_argument("--json", help="a designer JSON file (as `config import --json` wrote it)")
    source.add_argument("--db", help="read the database's config tables")
    source.add_argument("--seeds", help="folder with the config CSVs (default: the demo config)")
    loader = config_commands.add_parser(
        "load",
        help="settings seeds and config CSVs -> the database, without dbt (validated)",
        description="Write the recall/memory settings seeds shipped with rolemem (as `dbt "
        "seed` would) and the character config from --seeds (CSVs `config import --out` "
        "wrote; default: the demo config) into the database: for installs without dbt.",
    )
    _add(loader, "--db")
    loader.add_argument("--seeds", help="folder with the three character config CSVs")
    return parser


def _loop_commands(commands: Any) -> None:
    observe = commands.add_parser(
        "observe",
        help="extract a save's due turns into memories (the memory loop)",
        description="Look at one save x character after a turn: when 20 turns are pending "
        "(or the scene changed) the oldest go to the LLM and come back as memories. The LLM: "
        "--llm-base-url/--llm-model or ROLEMEM_LLM_BASE_URL/ROLEMEM_LLM_MODEL/"
        "ROLEMEM_LLM_API_KEY. Prints the report as JSON.",
    )
    _add(observe, "--db", "--save", "--user", "--agent", "--role", "--script-role")
    observe.add_argument("--scene", help="the scene the turn was played in")
    _add(observe, "--now")
    observe.add_argument("--user-name", help="player name for the prompt")
    observe.add_argument("--agent-name", help="character name for the prompt")
    _add(observe, "--llm-base-url", "--llm-model")

    maintain = commands.add_parser(
        "maintain",
        help="archive the weakest memories of players due; consolidate entities",
        description="Cleanup per the seed memory_loop_settings (moved to memory_archive, "
        "never deleted); with an LLM configured, merged entity descriptions are consolidated.",
    )
    _add(maintain, "--db", "--now")
    maintain.add_argument("--no-llm", action="store_true", help="cleanup only")
    _add(maintain, "--llm-base-url", "--llm-model")

    timeline = commands.add_parser("timeline", help="print a player's overview timeline")
    _add(timeline, "--db", "--user", "--agent")
    timeline.add_argument("--save", type=int, help="the save being played (current branch)")


def _time(raw: str | None) -> Any:
    from datetime import datetime

    try:
        return datetime.fromisoformat(raw) if raw else None
    except ValueError:
        raise RolememError(f"--now {raw!r}: expected an ISO time like 2021-02-21T12:00") from None


def _llm(args: Any) -> Any:
    from ..memory_loop.llm import OpenAICompatibleLLM

    return OpenAICompatibleLLM(
        base_url=args.llm_base_url, model=args.llm_model, timeout=60.0, max_retries=1
    )


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _observe(args: argparse.Namespace) -> None:
    from ..memory_loop import MemoryLoop

    with MemoryLoop(_existing_db(args), llm=_llm(args)) as loop:
        report = loop.observe(
            save_id=args.save,
            user_id=args.user,
            agent_id=args.agent,
            role_id=args.role,
            script_role_id=args.script_role,
            scene=args.scene,
            now=_time(args.now),
            user_name=args.user_name,
            agent_name=args.agent_name,
        )
    _print_json(asdict(report))


def _maintain(args: argparse.Namespace) -> None:
    from ..memory_loop import MemoryLoop

    llm = None if args.no_llm else _llm(args)
    with MemoryLoop(_existing_db(args), llm=llm) as loop:
        report = loop.maintain(now=_time(args.now), progress=stage_bars())
    _print_json(asdict(report))


def _timeline(args: argparse.Namespace) -> None:
    from ..memory_loop import MemoryLoop

    with MemoryLoop(_existing_db(args)) as loop:
        _print_json(loop.timeline(user_id=args.user, agent_id=args.agent, save_id=args.save))


def _import_chat(args: argparse.Namespace) -> None:
    _print_json(import_chat.run(args, lambda: _db_or_url(args)))


def _mcp(args: argparse.Namespace) -> None:
    mcp_stdio.run(args, lambda: _db_or_url(args), _version())


def _db_or_url(args: argparse.Namespace) -> str:
    """The PostgreSQL URL --db (or $ROLEMEM_DB) names, else the DuckDB file (which must exist)."""
    db = args.db or duckdb_connect.default_db_path()
    return db if is_postgres_url(db) else _existing_db(args)


def _existing_db(args: argparse.Namespace) -> str:
    path = args.db or duckdb_connect.default_db_path()
    if is_postgres_url(path):
        raise RolememError(
            f"`rolemem {args.command}` runs on the embedded DuckDB file; on PostgreSQL "
            "`rolemem init-db`, `memory`, `serve`, `import-chat`, `mcp` and `config "
            "import/export` run (and dbt --target postgres)"
        )
    if not Path(path).exists():  # opening would create an empty database
        raise RolememError(f"{path}: no such database file (run `rolemem init-db`)")
    return path


def _store(args: argparse.Namespace) -> contextlib.AbstractContextManager[Any]:
    """The store --db names, for commands that run on either engine: an existing DuckDB file,
    or a PostgreSQL database (an engine, closed afterwards)."""
    from ..engines import PostgresEngine

    db = _db_or_url(args)
    return PostgresEngine(db, max_size=2) if is_postgres_url(db) else contextlib.nullcontext(db)


def _init_db(args: argparse.Namespace) -> None:
    from ..schema.citus import SET_ASIDE

    path = args.db or duckdb_connect.default_db_path()
    if args.copy_from is not None:
        if not is_postgres_url(path):
            raise RolememError("--copy-from fills a PostgreSQL database: give --db postgresql://…")
        if args.demo:
            raise RolememError("give --demo or --copy-from, not both")
        if not Path(args.copy_from).is_file():
            raise RolememError(f"{args.copy_from}: no such database file")
        left_out = init_database(path, store=args.copy_from)
        print(f"application tables ready in {path} (rows of {args.copy_from} copied)")
        _say_without_player(left_out)
        return
    if args.demo:
        from ..testing.demo_data import load_demo_into

        _say_without_player(load_demo_into(path))
    else:  # a DuckDB file's tables too (none set aside there)
        moved = f"(requests of no player) moved to schema {SET_ASIDE}"
        _say_without_player(init_database(path), moved)
    print(f"application tables ready in {path}" + (" (demo data loaded)" if args.demo else ""))


def _say_without_player(count: int, fate: str = "left out") -> None:
    if count:
        print(
            f"{count} rows without a player {fate}: a database sharded by player (Citus) stores "
            "players' rows only",
            file=sys.stderr,
        )


def _memory(args: argparse.Namespace) -> None:
    from ..memory_builder import build_memory_for_save

    if args.role is None and args.script_role is None and args.name is None:
        raise RolememError("give the character with --role, --script-role or --name")
    # a game's own PostgreSQL database: every model over the save's lines there
    with _store(args) as store:
        messages = build_memory_for_save(
            store,
            args.save,
            role_id=args.role,
            script_role_id=args.script_role,
            display_name=args.name,
            context_emotion=not args.no_context_emotion,
        )
    _print_json(messages)


def _recall(args: argparse.Namespace) -> None:
    from ..character_memory import CharacterMemory

    context = _context(args.param)
    # the database dbt seeded, when one is named; else the config shipped with rolemem
    db = args.db or os.environ.get("ROLEMEM_DB")
    memory = CharacterMemory(_existing_db(args) if db else None, character_id=args.character)
    result = memory.session("cli").recall(
        args.text,
        context,
        require_match=not args.all_unlocked,
        user_name=args.user_name,
        char_name=args.char_name,
        explain=args.explain,
    )
    out: dict[str, object] = {
        "character_memory_attributes": result.attributes,
        "character_memory_event": result.events,
        "character_dialogue_style": result.dialogue_style,
    }
    if args.explain:
        out["explain"] = result.explain
    _print_json(out)


def _query(args: argparse.Namespace) -> None:
    from ..dynamic_memory import DynamicMemory

    now = _time(args.now)
    embedder: Any = None if args.keyword_only else "default"
    # only looking: open the file read-only, so it can be shared with other readers
    with DynamicMemory(_existing_db(args), embedder=embedder, read_only=not args.update) as memory:
        response = memory.query(
            args.text,
            user_id=args.user,
            agent_id=args.agent,
            limit=args.limit,
            score_threshold=args.threshold,
            now=now,
            user_name=args.user_name,
            agent_name=args.agent_name,
            update=args.update,
            save_id=args.save,
        )
    fields = ("memory_events", "memory_entities", "additional_info", "timeline", "prompt_text")
    _print_json({name: getattr(response, name) for name in fields})


def _config(args: argparse.Namespace) -> None:
    from ..character_memory import store_config, stored_config, validate_config
    from ..character_memory.config import (
        CharacterConfig,
        ConfigError,
        export_designer_json,
        parse_designer_json,
        read_seed_csvs,
        write_seed_csvs,
    )

    if args.config_command == "import":
        config = CharacterConfig()
        documents = [_designer_document(path, args) for path in args.files]
        if args.json:
            if len(documents) != 1:
                raise ConfigError("--json writes one file: import one file at a time")
            document = documents[0]
            if not isinstance(document, dict):
                document = _read_json(document)
            Path(args.json).write_text(
                json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
            )
        for document in documents:
            config.extend(parse_designer_json(document))
        counts = ", ".join(f"{len(rows)} {table}" for table, rows in config.tables.items())
        if args.db:
            with _store(args) as store:
                store_config(store, config)
        else:
            validate_config(config)
            write_seed_csvs(config, args.out)
        print(f"wrote {counts} to {args.db or args.out}")
    elif args.config_command == "load":
        from ..character_memory import load_seeds_into

        if args.seeds:  # the designers' own CSVs: their size advice is shown (the demo's not)
            validate_config(read_seed_csvs(args.seeds))
        names = load_seeds_into(_existing_db(args), args.seeds)
        print(f"loaded {len(names)} tables into {args.db or duckdb_connect.default_db_path()}")
    else:
        if args.json:
            document = _read_json(args.json)
        elif not args.character:
            raise ConfigError("--character is required (unless --json names the document)")
        else:
            if args.db:
                with _store(args) as store:
                    config = stored_config(store, args.character)
            else:
                config = read_seed_csvs(args.seeds)
            document = export_designer_json(config, args.character)
        if args.target_format == "sillytavern":
            from ..character_memory.sillytavern import to_lorebook

            document = to_lorebook(document)
        _print_json(document)


def _designer_document(path: str, args: argparse.Namespace) -> str | dict[str, Any]:
    """One file to import as rolemem's designer JSON: its path (read by the parser, which
    names it in messages), or a SillyTavern file converted, what it carries without a meaning
    here reported on stderr."""
    from ..character_memory.config import ConfigError

    if args.source_format != "sillytavern":
        return path
    document = _read_json(path)
    if not args.character:
        raise ConfigError("--character is required with --from sillytavern")
    from ..character_memory.sillytavern import from_lorebook

    conversion = from_lorebook(document, args.character)
    for line in conversion.report:
        print(f"{path}: {line}", file=sys.stderr)
    return conversion.document


def _read_json(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # a decoding error is a ValueError too
        raise RolememError(f"{path}: cannot read JSON: {exc}") from None


def _explain(args: argparse.Namespace) -> None:
    from ..turn.companion import Companion

    embedder: Any = None if args.keyword_only else "default"
    with Companion(
        _existing_db(args), character_id=args.character, agent_id=args.agent, embedder=embedder
    ) as companion:
        # a look, not a turn: recall side effects are not counted
        result = companion.turn(
            save_id=args.save,
            user_id=args.user,
            message=args.message,
            role_id=args.role,
            script_role_id=args.script_role,
            context=_context(args.param),
            now=_time(args.now),
            count_recall=False,
        )
    if args.messages:
        _print_json(result.messages)
    print(f"{'layer':<15} {'status':<18} {'item':<40} why")
    for row in result.trace:
        item = str(row.get("item") or "").replace("\n", " ")
        why = row.get("why")
        if isinstance(why, dict):
            why = ", ".join(
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                for k, v in why.items()
                if v is not None
            )
        print(f"{row['layer']:<15} {row['status']:<18} {item[:40]:<40} {why or ''}")
    print(f"tokens: {result.prompt_tokens}")


def _context(params: list[str]) -> dict[str, object]:
    context = {}
    for item in params:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise RolememError(f"--param {item!r}: expected FIELD=VALUE")
        try:
            context[name] = json.loads(raw)
        except json.JSONDecodeError:
            context[name] = raw
    return context


def _snapshot(args: argparse.Namespace) -> None:
    if args.url:
        from .service_calls import call

        answer = call(args, "POST", "/snapshot", b"")
        print(f"snapshot {answer['path']} ({answer['bytes']:,} bytes)")
        return
    if not args.out:
        raise RolememError("give --out PATH (or --url of the running service)")
    from ..engines.snapshot import write_snapshot

    with (
        duckdb_connect.cursor(_existing_db(args), tuned=False) as con,
        progress_bar(1, "snapshot") as bar,
    ):
        size = write_snapshot(con, args.out)
        bar.update(1)
    print(f"snapshot {args.out} ({size:,} bytes)")


def _serve(args: argparse.Namespace) -> None:
    from ..service.core.settings import from_flags
    from .serve import metrics_directory, open_service

    settings = from_flags(args)
    keyed = bool(settings.api_key or settings.designer_key or settings.keys_file)
    warning = open_service(settings.host, keyed)  # no key: refused off loopback
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)
    db = _db_or_url(argparse.Namespace(db=settings.db, command="serve"))
    # refused before the metrics variable is set: a process that imports prometheus-client
    # while it is set keeps its multiprocess mode for good
    if settings.workers > 1 and not is_postgres_url(db):
        raise RolememError(
            "--workers above 1 needs a PostgreSQL database (--db postgresql://…): one process "
            "owns a DuckDB file"
        )
    # before the service (and prometheus-client) is imported: it reads the variable then
    with metrics_directory(settings.workers):
        _run_service(settings.model_copy(update={"db": db}), verbose=args.verbose)


def _run_service(settings: Any, verbose: bool) -> None:
    import uvicorn

    from ..service import create_app
    from ..service.app import SPEC_VARIABLE, arguments_of
    from ..service.core.connections import server_options
    from .serve import announce

    arguments = arguments_of(settings)  # an LLM without a model refused before the start-up line
    log_config = announce(settings, verbose)
    app: Any = create_app(**arguments)
    if settings.workers > 1:
        # each worker process builds its app from the same settings (uvicorn starts them)
        os.environ[SPEC_VARIABLE] = settings.model_dump_json()
        app = "rolemem.service.app:from_environment"
    uvicorn.run(
        app,
        factory=settings.workers > 1,
        workers=settings.workers,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        log_config=log_config,
        access_log=False,  # the service's own access log names the route and the request id
        timeout_graceful_shutdown=int(max(1, settings.shutdown_grace)),
        **server_options(settings),  # header deadline, connection cap, h11's header limit
    )


def _official(args: argparse.Namespace) -> None:
    from ..dynamic_memory import DynamicMemory

    embedder: Any = None if getattr(args, "keyword_only", False) else "default"
    with DynamicMemory(_existing_db(args), embedder=embedder) as memory:
        if args.official_command == "export":
            _print_json(memory.export_official(args.agent))
            return
        doc = _read_json(args.file)
        total = len(doc.get("events", [])) if isinstance(doc, dict) else 0
        with progress_bar(total, "embedding events", "event") as bar:
            events, entities = memory.import_official(
                doc, progress=lambda done, total: bar.update(done - bar.n)
            )
    print(f"imported {events} official events and {entities} entities")


def _warn_in_one_line(message: Warning | str, *_args: object, **_kwargs: object) -> None:
    print(f"rolemem: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # numpy's BLAS on one thread unless the caller says otherwise (read when numpy loads, which
    # the commands do later; `serve`'s workers inherit it): a player's vectors against one query
    # are too small to split, and a second spinning thread cost 2.7x the wall time on two busy
    # cores (docs/decisions/dense-recall-in-numpy.md)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    warnings.showwarning = _warn_in_one_line  # type: ignore[assignment]
    if args.verbose:  # quiet by default: the library only logs, the CLI decides to show it
        logging.basicConfig(level=logging.INFO, format="rolemem: %(name)s: %(message)s")
    try:
        globals()["_" + args.command.replace("-", "_")](args)  # `init-db` runs _init_db, …
    except BrokenPipeError:  # `rolemem ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return 0
    except (RolememError, OSError, TypeError) as exc:
        print(f"rolemem: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # engine errors: still one line, never a traceback
        print(f"rolemem: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0
