"""Exception types: one per kind of failure, each message naming the bad thing."""


class RolememError(Exception):
    """Base class for every error rolemem raises on purpose."""


class ChainError(RolememError, ValueError):
    """A save's parent chain is broken: a cycle, or a parent line from another save."""


class LineError(RolememError, ValueError):
    """A dialogue line cannot be built into memory (unknown attribute, wrong field type)."""


class SaveNotFoundError(RolememError, LookupError):
    """The requested save does not exist."""


class DatabaseLockedError(RolememError):
    """Another process holds the DuckDB file (DuckDB allows one writing process per file)."""
