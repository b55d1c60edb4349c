"""SQLModel tables: the game's and the config's (`game`), the player memories' (`memory`);
how rolemem opens them (`store`) and brings an older store's up to date (`migrations`).
`rolemem.schema` re-exports the game's and the config's, as before."""

from .game import (
    APP_TABLES,
    CONFIG_TABLES,
    CharacterAttributes,
    CharacterDialogueStyles,
    CharacterEvents,
    ConfigVersion,
    Line,
    Role,
    Save,
    create_postgres_indexes,
    drop_all,
    drop_tables,
)
from .store import create_all, create_config_tables

__all__ = [
    "APP_TABLES",
    "CONFIG_TABLES",
    "CharacterAttributes",
    "CharacterDialogueStyles",
    "CharacterEvents",
    "ConfigVersion",
    "Line",
    "Role",
    "Save",
    "create_all",
    "create_config_tables",
    "create_postgres_indexes",
    "drop_all",
    "drop_tables",
]
