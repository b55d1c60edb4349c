"""Who may call what: the service's keys (a name, a role, optionally the players it may act
for) and the one rule deciding whether a key may call a route group (`KeyRing.allows`); the
roles, the flags' keys and the key file are docs/service.md's "Keys, roles and quotas".
Every secret is kept as its SHA-256: a request's key is hashed once and compared with every
key's digest in constant time (the time says neither which key nearly matched nor its
length)."""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import logging
import os
import re
import threading
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...errors import RolememError

log = logging.getLogger(__name__)

GROUPS = ("game", "designer", "snapshot", "admin")
ROLES = {
    "game": frozenset({"game"}),
    "designer": frozenset({"designer"}),
    "admin": frozenset(GROUPS),
}
# how often the watcher looks at the key file; a change is loaded once it has held for one
# look (not caught mid-write), so within 2 looks of the last write
WATCH_SECONDS = 0.5
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")
_VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")
_FIELDS = {"name", "secret", "role", "players"}


@dataclass(frozen=True)
class Key:
    """A key: its name is logged, never its secret; `players`: a glob (None: any)."""

    name: str
    reach: frozenset[str]
    digest: bytes = field(repr=False)
    players: str | None = None

    def acts_for(self, user_id: str) -> bool:
        """Whether the key may name player `user_id` (case-sensitive fnmatch)."""
        return self.players is None or fnmatch.fnmatchcase(user_id, self.players)


def _refused(message: str) -> RolememError:
    """A key that cannot be loaded: the --keys option is at fault."""
    return RolememError(message, field="keys")


def digest_of(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def flag_keys(api_key: str | None, designer_key: str | None) -> tuple[Key, ...]:
    """The keys of `--api-key` and `--designer-key`."""
    reach = frozenset({"game", "snapshot"}) if designer_key else ROLES["admin"]
    keys = [Key("api-key", reach, digest_of(api_key))] if api_key else []
    if designer_key:
        keys.append(Key("designer-key", frozenset({"designer", "admin"}), digest_of(designer_key)))
    return tuple(keys)


def read_key_file(path: str) -> tuple[Key, ...]:
    """The keys of a key file, or RolememError saying what is wrong and where."""
    try:
        with open(path, "rb") as file:
            document = tomllib.load(file)
    except OSError as exc:
        raise _refused(f"key file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _refused(f"key file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(document) - {"keys"})
    if unknown:
        raise _refused(f"key file {path}: unknown entry {unknown[0]!r} (only [[keys]] tables)")
    tables = document.get("keys")
    if not isinstance(tables, list) or not tables:
        raise _refused(
            f"key file {path}: no keys (give one or more [[keys]] tables with name, secret, role)"
        )
    keys = tuple(_key(path, index, table) for index, table in enumerate(tables))
    checked(keys, where=f"key file {path}")
    return keys


def _key(path: str, index: int, table: object) -> Key:
    at = f"key file {path}: keys[{index}]"
    if not isinstance(table, dict):
        raise _refused(f"{at} must be a [[keys]] table")
    name, secret, role = table.get("name"), table.get("secret"), table.get("role")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _refused(f"{at}.name must be 1-64 letters, digits, '.', '_' or '-' (it is logged)")
    at = f"key file {path}: key {name!r}"
    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise _refused(f"{at}: unknown field {unknown[0]!r} (name, secret, role, players)")
    if role not in ROLES:
        raise _refused(f"{at}: role must be one of {', '.join(ROLES)}")
    if not isinstance(secret, str) or not secret:
        raise _refused(f"{at}: secret is required (a string)")
    if secret.startswith("sha256:"):
        hex_digest = secret.removeprefix("sha256:")
        if not _HEX_DIGEST.fullmatch(hex_digest):
            raise _refused(f"{at}: sha256: must be followed by 64 hex digits")
        digest = bytes.fromhex(hex_digest)
    elif _VISIBLE_ASCII.fullmatch(secret):
        digest = digest_of(secret)
    else:  # an X-API-Key header could never carry it
        raise _refused(f"{at}: a secret is visible ASCII, without spaces")
    players = table.get("players")
    if players is not None and (not isinstance(players, str) or not players):
        raise _refused(f"{at}: players must be a glob (e.g. 'studio-a-*')")
    return Key(name, ROLES[str(role)], digest, players)


def checked(keys: Iterable[Key], *, where: str) -> None:
    """No two keys share a name or a secret (a request's key names one key)."""
    names: set[str] = set()
    digests: set[bytes] = set()
    for key in keys:
        if key.name in names:
            raise _refused(f"{where}: two keys are named {key.name!r}")
        if key.digest in digests:
            raise _refused(f"{where}: key {key.name!r} has another key's secret")
        names.add(key.name)
        digests.add(key.digest)


class KeyRing:
    """The keys in force: read on the event loop, replaced whole by `reload` on the watcher's
    thread (one assignment: readers see the old keys or the new ones, never a mix)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        designer_key: str | None = None,
        path: str | None = None,
    ) -> None:
        self.path = path
        self._flags = flag_keys(api_key, designer_key)
        self._signature = self._seen = None if path is None else _signature(path)
        self._keys = self._flags if path is None else self._with_flags(read_key_file(path))
        self._stopped = threading.Event()
        self._watcher: threading.Thread | None = None
        reached = {group for key in self._keys for group in key.reach}
        # without a game key and a key file, what no key reaches stays open
        self.open_groups = (
            frozenset() if api_key or path is not None else frozenset(GROUPS) - reached
        )

    @property
    def keyed(self) -> bool:
        """Whether any route needs a key."""
        return self.open_groups != frozenset(GROUPS)

    def identify(self, given: bytes) -> Key | None:
        """The key whose secret is `given` (an X-API-Key header's bytes), else None."""
        if not given:
            return None
        digest = hashlib.sha256(given).digest()
        found = None
        for key in self._keys:  # every key compared: the time does not say which one matched
            if hmac.compare_digest(digest, key.digest):
                found = key
        return found

    def allows(self, key: Key | None, group: str | None) -> bool:
        """THE rule: whether a request carrying `key` (None: no key or an unknown one) may
        call a route of `group` (None: a path no route takes, answered 404 to a key holder)."""
        if group is None:
            return key is not None or bool(self.open_groups)
        return group in self.open_groups or (key is not None and group in key.reach)

    def start(self) -> None:
        """Look at the key file on a thread of its own, so no request pays for the look."""
        if self.path is not None:
            self._watcher = threading.Thread(target=self._watch, name="rolemem-keys", daemon=True)
            self._watcher.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._watcher is not None:
            self._watcher.join(5)

    def _watch(self) -> None:
        while not self._stopped.wait(WATCH_SECONDS):
            try:
                self.reload()
            except Exception as exc:  # the watcher must outlive any surprise
                log.error("the key file was not reloaded: %s: %s", type(exc).__name__, exc)

    def reload(self) -> None:
        """Read the key file again once a change has held still for a look (a file caught
        mid-write is not read); a file that fails keeps the keys in force."""
        if self.path is None:
            return
        signature = _signature(self.path)
        settled, self._seen = signature == self._seen, signature
        if signature == self._signature or not settled:
            return
        self._signature = signature  # one error line per change, not one per look
        try:
            keys = self._with_flags(read_key_file(self.path))
        except RolememError as exc:
            log.error("the key file was not reloaded, the previous keys stay: %s", exc)
            return
        self._keys = keys
        log.info("key file %s reloaded: %d keys", self.path, len(keys) - len(self._flags))

    def _with_flags(self, keys: tuple[Key, ...]) -> tuple[Key, ...]:
        both = self._flags + keys
        checked(both, where="--api-key, --designer-key and the key file")
        return both


def _signature(path: str) -> tuple[int, int, int] | None:
    """What changes when the file does: its inode (a file renamed over it), size, mtime."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)
