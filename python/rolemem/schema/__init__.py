"""SQLModel tables: the game's and the config's (`game`), the player memories' (`memory`).
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
    add_columns,
    create_all,
    create_config_tables,
    create_postgres_indexes,
    drop_all,
    drop_tables,
)

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
    "add_columns",
    "create_all",
    "create_config_tables",
    "create_postgres_indexes",
    "drop_all",
    "drop_tables",
]
