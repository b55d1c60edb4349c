"""Engines other than the embedded DuckDB file. The project's SQL is written once, in DuckDB's
dialect with dispatch macros (`adapter.dispatch`) where engines differ; an engine here renders
it for itself, transpiles it once per statement and runs it with bound parameters."""

from .postgres import PostgresEngine

__all__ = ["PostgresEngine"]
