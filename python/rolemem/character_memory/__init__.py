"""Character (solidified) memory: the designer config (`config`), the recall library built from
it (`library`), recall sessions (`recall`; a save's sticky queue in the store:
`stored_queue`), SillyTavern lorebooks and the unlock matrix. The
rules are the models under models/*/character_memory."""

from .library import CharacterLibrary, load_seeds_into, store_config, validate_config
from .recall import (
    CharacterMemory,
    RecallResult,
    RecallSession,
    config_version,
    stored_config,
)
from .stored_queue import StoredRecallSession

__all__ = [
    "CharacterLibrary",
    "CharacterMemory",
    "RecallResult",
    "RecallSession",
    "StoredRecallSession",
    "config_version",
    "load_seeds_into",
    "store_config",
    "stored_config",
    "validate_config",
]
