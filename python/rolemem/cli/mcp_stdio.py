"""`rolemem mcp`: the service's tools over MCP (stdio), on a store this process opens (`--db`)
or through a running service (`--url`); the flags' help says the rest."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import Any

from ..errors import RolememError


def add_parser(commands: Any, db_help: str) -> None:
    command = commands.add_parser(
        "mcp",
        help="the service's tools over the Model Context Protocol (stdio)",
        description="An MCP server on stdin/stdout (the official SDK): recall, turn_prompt, "
        "list_memories, search_memories, delete_memory, memory_status; with --designer also "
        "recall_preview and unlock_matrix. Each tool is one route of the service, called in "
        "this process on --db's store or on the service at --url, whose key is "
        "$ROLEMEM_API_KEY (designer tools: $ROLEMEM_DESIGNER_KEY, else $ROLEMEM_API_KEY). "
        "`rolemem serve` answers the same tools at /mcp (streamable HTTP).",
    )
    where = command.add_mutually_exclusive_group()
    where.add_argument("--db", help=db_help)
    where.add_argument("--url", help="a running service (http://host:port)")
    command.add_argument(
        "--designer",
        action="store_true",
        help="also offer the designer's tools (recall_preview, unlock_matrix)",
    )
    command.add_argument("--keyword-only", action="store_true", help="with --db: no embedder")
    command.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="with --url: seconds a call may take (default: %(default)s)",
    )


def run(args: argparse.Namespace, store: Callable[[], str], version: str) -> None:
    """Serve until the client closes stdin (`store`: --db's store, resolved only without
    --url; `version`: rolemem's, the server's)."""
    import anyio

    from ..service.mcp import stdio

    if args.url and args.keyword_only:
        raise RolememError("--keyword-only is the store's: give it to `rolemem serve`")
    if args.url:
        serve = partial(stdio.serve_url, args.url, timeout=args.timeout)
    else:
        serve = partial(stdio.serve_store, store(), keyword_only=args.keyword_only)
    anyio.run(partial(serve, designer=args.designer, version=version))
