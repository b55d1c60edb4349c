"""Command line: `rolemem init-db`, `rolemem memory`. Errors are one line and exit code 2."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import _duck
from .errors import RolememError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rolemem", description="Memory for LLM role-play characters (DuckDB + dbt models)."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    init = commands.add_parser(
        "init-db", help="create the application tables in the embedded DuckDB file"
    )
    init.add_argument("--db", help="DuckDB file (default: $ROLEMEM_DB or ./rolemem.duckdb)")
    init.add_argument("--demo", action="store_true",
                      help="drop and reload the demo saves (the spec's two examples)")

    memory = commands.add_parser(
        "memory",
        help="print one character's chat memory for a save as JSON",
        description="Walk the save's current branch and render it from one character's point "
        "of view as OpenAI-style messages. Give at least one of --role, --script-role, --name.",
    )
    memory.add_argument("--db", help="DuckDB file (default: $ROLEMEM_DB or ./rolemem.duckdb)")
    memory.add_argument("--save", type=int, required=True, help="save id")
    memory.add_argument("--role", type=int, help="the character's role_id")
    memory.add_argument("--script-role", help="the character's script_role_id (script NPC)")
    memory.add_argument("--name", help="the character's display_name")
    memory.add_argument("--no-context-emotion", action="store_true",
                        help="omit 【emotion】 from other speakers' background lines")
    return parser


def _init_db(args: argparse.Namespace) -> None:
    from .schema import create_all, engine_for

    path = args.db or _duck.default_db_path()
    engine = engine_for(path)
    if args.demo:
        from .demo_data import load_demo

        load_demo(engine)
    else:
        create_all(engine)
    engine.dispose()
    print(f"application tables ready in {path}" + (" (demo data loaded)" if args.demo else ""))


def _memory(args: argparse.Namespace) -> None:
    from .memory_builder import build_memory_for_save

    if args.role is None and args.script_role is None and args.name is None:
        raise RolememError("give the character with --role, --script-role or --name")
    messages = build_memory_for_save(
        args.db or _duck.default_db_path(),
        args.save,
        role_id=args.role,
        script_role_id=args.script_role,
        display_name=args.name,
        context_emotion=not args.no_context_emotion,
    )
    print(json.dumps(messages, ensure_ascii=False, indent=2))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        {"init-db": _init_db, "memory": _memory}[args.command](args)
    except (RolememError, OSError) as exc:
        print(f"rolemem: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # engine errors: still one line, never a traceback
        print(f"rolemem: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
