"""SQLModel tables: the game's and the config's (`game`), the player memories' (`memory`);
how rolemem opens them (`store`) and brings an older store's up to date (`migrations`).
`rolemem.schema` re-exports what its callers import of the game's and the config's."""

from .game import APP_TABLES, CONFIG_TABLES, Line, Role, Save, drop_all
from .store import create_all, create_config_tables

__all__ = [
    "APP_TABLES",
    "CONFIG_TABLES",
    "Line",
    "Role",
    "Save",
    "create_all",
    "create_config_tables",
    "drop_all",
]
