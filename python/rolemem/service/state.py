"""What the service owns: the one DuckDB connection (DuckDB allows one writing process per
file) and the objects that read and write through it, each call on a cursor of its own."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import duckdb

from .. import _duck
from ..character_memory import CharacterMemory
from ..companion import Companion
from ..dynamic_memory import DynamicMemory
from ..llm import ChatModel
from ..memory_loop import MemoryLoop
from ..snapshot import write_snapshot


@dataclass
class Store:
    path: str
    llm: ChatModel | None = None
    embedder: Any = "default"
    snapshot_path: str | None = None
    con: duckdb.DuckDBPyConnection = field(init=False)
    memory: DynamicMemory = field(init=False)
    loop: MemoryLoop = field(init=False)
    # writes (lines, snapshots) one at a time: DuckDB would reject concurrent writers to the
    # same rows anyway, and a snapshot must not interleave with a write
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    _companions: dict[tuple[str, str], Companion] = field(default_factory=dict)
    _characters: dict[str, CharacterMemory] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self) -> None:
        self.con = _duck.connect(self.path)
        self.memory = DynamicMemory(self.con, embedder=self.embedder)
        self.embedder = self.memory.embedder  # one model for every companion
        self.loop = MemoryLoop(self.con, llm=self.llm, embedder=self.embedder)

    def close(self) -> None:
        for companion in self._companions.values():
            companion.close()
        self.loop.close()
        self.memory.close()
        with self.write_lock:  # a scheduled snapshot still copying finishes first
            self.con.close()

    def companion(self, character_id: str, agent_id: str | None) -> Companion:
        key = (character_id, agent_id or character_id)
        with self._lock:
            if key not in self._companions:
                self._companions[key] = Companion(
                    self.con,
                    character_id=character_id,
                    agent_id=agent_id,
                    llm=self.llm,
                    embedder=self.embedder,
                )
            return self._companions[key]

    def character(self, character_id: str) -> CharacterMemory:
        with self._lock:
            if character_id not in self._characters:
                self._characters[character_id] = CharacterMemory(
                    self.con, character_id=character_id
                )
            return self._characters[character_id]

    def forget_character(self, character_id: str) -> None:
        """Its config changed: the next request loads it again."""
        with self._lock:
            self._characters.pop(character_id, None)
            for key in [key for key in self._companions if key[0] == character_id]:
                # dropped, not closed: a request may still be using it
                self._companions.pop(key)

    def snapshot(self) -> tuple[str, int]:
        """A consistent read-only copy of the whole database for analysts and dbt."""
        if not self.snapshot_path:
            raise FileNotFoundError("no snapshot path: start the service with --snapshot PATH")
        with self.write_lock:  # no line append interleaves with the copy
            size = write_snapshot(self.con, self.snapshot_path)
        return self.snapshot_path, size
