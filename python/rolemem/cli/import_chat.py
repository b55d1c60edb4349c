"""`rolemem import-chat`: a chat file (memory_builder.chat_files reads its formats) onto a
save's tip, into a store (`--db`) or through a running service (`--url`), whose memory loop
`--wait` and `--flush` follow with a progress bar."""

from __future__ import annotations

import argparse
import io
import json
import time
import urllib.parse
from typing import Any

from ..errors import RolememError
from ..memory_builder.chat_files import chat_lines, read_rows
from .progress import progress_bar
from .service_calls import call

_POLL_SECONDS = 0.5


def add_parser(commands: Any, db_help: str) -> None:
    command = commands.add_parser(
        "import-chat",
        help="import a chat history onto a save (ndjson lines, OpenAI messages, SillyTavern)",
        description="Reads FILE: rolemem lines as ndjson, OpenAI-style messages "
        '({"role", "content", "name"}, a JSON array or ndjson) or a SillyTavern chat .jsonl, '
        "and appends them, in order, onto the save's tip in one transaction. The character's "
        "lines are --role-id's. With --url, through a running service (its key: --api-key "
        "or $ROLEMEM_API_KEY), whose memory loop then extracts the history in the background. "
        "Prints the answer as JSON.",
    )
    command.add_argument("file", help="the chat file")
    command.add_argument("--save-id", type=int, required=True, help="the save to import onto")
    command.add_argument("--user-id", required=True, help="the save's player")
    command.add_argument("--role-id", type=int, help="the character speaking (its role)")
    command.add_argument("--script-role-id", help="the character speaking (a script NPC)")
    where = command.add_mutually_exclusive_group()
    where.add_argument("--db", help=db_help)
    where.add_argument("--url", help="a running service (http://host:port)")
    command.add_argument("--api-key", help="the service's key (default: $ROLEMEM_API_KEY)")
    command.add_argument("--idempotency-key", help="retry safely: the same key writes once")
    command.add_argument(
        "--wait",
        action="store_true",
        help="with --url: follow the memory loop until its extraction is done",
    )
    command.add_argument(
        "--flush",
        action="store_true",
        help="with --url: extract every imported turn, the remainder below the batch size "
        "(extract_at_turns) included, and follow the memory loop until it is done (--wait)",
    )


def run(args: argparse.Namespace, db: Any) -> dict[str, Any]:
    """The import's answer (`db`: the store of --db, called only without --url)."""
    lines = chat_lines(
        read_rows(args.file), role_id=args.role_id, script_role_id=args.script_role_id
    )
    if not lines:
        raise RolememError(f"{args.file}: no messages to import")
    if args.url:
        answer = _over_http(args, lines)
        if args.wait or args.flush:
            _follow(args, answer)
        return answer
    if args.wait or args.flush:
        flag = "--wait" if args.wait else "--flush"
        raise RolememError(f"{flag} follows a service's memory loop: give --url")
    return _into_store(args, db(), lines)


def _into_store(args: argparse.Namespace, db: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    from ..memory_builder.saves import Saves

    with Saves(db) as saves, progress_bar(len(lines), "importing", "line") as bar:
        return saves.import_lines(
            args.save_id,
            lines,
            user_id=args.user_id,
            progress=lambda done, total: bar.update(done - bar.n),
        )


def _over_http(args: argparse.Namespace, lines: list[dict[str, Any]]) -> dict[str, Any]:
    from tqdm.utils import CallbackIOWrapper

    body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    headers = {"Content-Type": "application/x-ndjson", "Content-Length": str(len(body))}
    if args.idempotency_key:
        headers["Idempotency-Key"] = args.idempotency_key
    query = urllib.parse.urlencode(
        {"user_id": args.user_id, **({"flush": "true"} if args.flush else {})}
    )
    with progress_bar(len(body), "uploading", "B") as bar:
        # the body moves the bar as the connection reads it
        counted = CallbackIOWrapper(bar.update, io.BytesIO(body))
        return call(args, "POST", f"/saves/{args.save_id}/import?{query}", counted, **headers)


def _follow(args: argparse.Namespace, answer: dict[str, Any]) -> None:
    """Each observed character's extraction, until its queue is idle: a bar of the turns
    extracted so far."""
    for observed in answer["observed"]:
        if observed["extraction"] != "scheduled":
            continue
        query = urllib.parse.urlencode({"user_id": args.user_id, "role_id": observed["role_id"]})
        path = f"/saves/{answer['save_id']}/memory_status?{query}"
        status = call(args, "GET", path)
        desc = f"extracting ({observed['agent_id']})"
        with progress_bar(status["pending_turns"], desc, "turn") as bar:
            start = status["pending_turns"]
            while status["extraction"] in ("queued", "retrying"):
                bar.update(start - status["pending_turns"] - bar.n)
                time.sleep(_POLL_SECONDS)
                status = call(args, "GET", path)
            status = call(args, "GET", path)  # the pending turns after the last batch
            bar.update(start - status["pending_turns"] - bar.n)
        observed["pending_turns"] = status["pending_turns"]
        observed["last_error"] = status["last_error"]
