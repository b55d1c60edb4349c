"""SillyTavern lorebooks and character cards <-> rolemem's designer JSON.

Two layouts come in (their fields and types: lorebook_contract): World Info files (entries by
uid) and character cards V2/V3 (a list in `data.character_book`, or a bare `character_book`).

What has a meaning here is mapped: keys -> 关键词, content -> 内容, comment (a card entry's
name when it has no comment) -> the entry's category, order -> 强度 (rank among the book's
orders, 1-5), disabled -> a condition no game context meets (never unlocked), secondary keys
with selective logic -> 次要关键词 and 次要关键词逻辑 (AND_ANY, NOT_ALL, NOT_ANY, AND_ALL: whether
a match counts), constant -> 常驻 (recalled whenever unlocked), sticky -> 停留轮数 (turns a
recall stays queued), and game-state conditions written under `extensions.rolemem` ({kind,
date, queryParams}). The SillyTavern fields are also carried, untouched, in the entry's
`extensions.sillytavern` with everything that has no meaning here (reported), and the book's
own fields in the document's: `to_lorebook` gives back the same file, with any of the mapped
values a designer changed since written back.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from .config import KINDS, ConfigError, quoted_cut
from .contract import LOGICS, whole_number
from .lorebook_contract import CardEntry, WorldInfoEntry, layout_of

DEFAULT_GROUP = "世界书"
# a condition on a field no game context sends: how a disabled entry stays locked
DISABLED = {"field": "sillytavern_disabled_entry", "value": True, "operator": "eq"}
# fields each layout maps (the rest is carried)
_WORLD_INFO_MAPPED = ("key", "content", "comment", "order", "disable")
_CARD_MAPPED = ("keys", "content", "comment", "name", "insertion_order", "enabled")
# fields with a meaning elsewhere in SillyTavern that rolemem does not apply, and why
_NOT_APPLIED = {
    "cooldown": "cooldown is carried, not applied",
    "delay": "delay is carried, not applied",
    "probability": "probability is carried, not applied (recall is deterministic)",
    "useProbability": "probability is carried, not applied (recall is deterministic)",
    "group": "inclusion groups are carried, not applied",
    "groupOverride": "inclusion groups are carried, not applied",
    "groupWeight": "inclusion groups are carried, not applied",
    "group_weight": "inclusion groups are carried, not applied",
    "position": "insertion position is carried; rolemem fills its three prompt blocks",
    "depth": "insertion depth is carried; rolemem fills its three prompt blocks",
    "priority": "priority is carried; 强度 comes from the insertion order",
}
_DISABLED_NOTE = "disabled entries are never unlocked (a condition no game context meets)"
_UNSELECTIVE_NOTE = (
    "secondary keys of an entry that is not selective are carried, not applied (as in SillyTavern)"
)
# what the report says of each field it names
_NOTES = {
    **_NOT_APPLIED,
    "disable": _DISABLED_NOTE,
    "enabled": _DISABLED_NOTE,
    "keysecondary": _UNSELECTIVE_NOTE,
    "secondary_keys": _UNSELECTIVE_NOTE,
}
# values that ask for nothing (a field set to one of them is not reported)
_DEFAULTS: tuple[Any, ...] = (None, False, [], "", 0, 100)


@dataclass
class Conversion:
    """A designer document (rolemem's JSON, with `extensions`) and what import reported:
    one line per field that has no meaning here, naming the entries that set it."""

    document: dict[str, Any]
    report: list[str] = field(default_factory=list)


def from_lorebook(doc: Mapping[str, Any], character_id: str) -> Conversion:
    """A SillyTavern World Info file or character card -> rolemem's designer JSON."""
    layout, book, entries = _book_of(doc)
    # the layout's names: a bare character_book's entries are a card's
    world_info = layout == "world_info"
    mapped = _WORLD_INFO_MAPPED if world_info else _CARD_MAPPED
    keys_field, order_field = ("key", "order") if world_info else ("keys", "insertion_order")
    # an entry named by its path in the file (its uid cut short: a file's key may be long)
    within = "entries" if layout != "card" else "data.character_book.entries"
    paths = (
        f"{within}.{quoted_cut(uid)}" if world_info else f"{within}[{i}]"
        for i, (uid, _) in enumerate(entries)
    )
    entries = [
        (uid, _checked(layout, entry, f"entry {quoted_cut(uid)}", path))
        for (uid, entry), path in zip(entries, paths, strict=True)
    ]
    orders = sorted({entry.get(order_field, 100) for _, entry in entries})
    document: dict[str, Any] = {"character_id": character_id, **{kind: {} for kind in KINDS}}
    noted: defaultdict[str, list[str]] = defaultdict(list)
    for position, (uid, entry) in enumerate(entries):
        extensions = dict(entry.get("extensions") or {})
        ours = extensions.pop("rolemem", None) or {}
        kind = ours.get("kind", "attributes")
        name = None if world_info else entry.get("name")
        group = ours.get("group") or entry.get("comment") or name or DEFAULT_GROUP
        disabled = entry.get("disable", False) if world_info else not entry.get("enabled", True)
        conditions = [*ours.get("queryParams", []), *([dict(DISABLED)] if disabled else [])]
        carried = {k: copy.deepcopy(v) for k, v in entry.items() if k not in mapped}
        carried["extensions"] = extensions
        # what rebuilds the entry as it was: its place in the book, its uid, and the mapped
        # values that rolemem's fields hold differently
        carried["_book"] = {
            "position": position,
            "uid": uid,
            **{k: entry[k] for k in mapped if k in entry and k not in ("content", keys_field)},
        }
        if "extensions" not in entry:
            carried["_book"]["no_extensions"] = True
        rules, ignored = _rules(entry, world_info)
        if ignored:
            noted[ignored].append(str(uid))
        row: dict[str, Any] = {
            "关键词": list(entry.get(keys_field, [])),
            "内容": entry.get("content", ""),
            "强度": 1 + round(4 * orders.index(entry.get(order_field, 100)) / (len(orders) - 1))
            if len(orders) > 1
            else 3,
            "queryParams": conditions,
            **rules,
            "extensions": {"sillytavern": carried, "rolemem": ours},
        }
        if kind == "events":
            row["日期"] = ours.get("date", "")
        document[kind].setdefault(group, []).append(row)
        # a card keeps SillyTavern's own fields (sticky, group_weight…) under extensions
        for key, value in [*entry.items(), *extensions.items()]:
            if key in _NOT_APPLIED and value not in _DEFAULTS:
                noted[key].append(str(uid))
        if disabled:
            noted["disable" if world_info else "enabled"].append(str(uid))
    document["extensions"] = {"sillytavern": {"layout": layout, "book": book}}
    report = [
        f"{key}: {_NOTES[key]} (entries {', '.join(map(quoted_cut, uids))})"
        for key, uids in sorted(noted.items())
    ]
    return Conversion(document, report)


def _checked(layout: str, entry: Any, where: str, path: str | None = None) -> Mapping[str, Any]:
    """`entry`, its types as its layout's contract model reads them (the wrong one named;
    `path`: the entry's in the file, the error's field)."""
    try:
        (WorldInfoEntry if layout == "world_info" else CardEntry).model_validate(entry)
        return entry
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"] if isinstance(part, str)) or "the entry"
        expected = _EXPECTED[field.rsplit(".", 1)[-1]]
        got = quoted_cut(repr(error["input"]))
        raise ConfigError(f"{where}: {field} must be {expected}, got {got}", field=path) from None


# what a field's value must be, by its name (the models' types)
_EXPECTED = {
    **dict.fromkeys(("the entry", "extensions", "rolemem"), "an object"),
    **dict.fromkeys(("keys", "keysecondary", "secondary_keys"), "a list of strings"),
    **dict.fromkeys(("content", "comment", "name", "group", "date"), "a string"),
    **dict.fromkeys(("order", "insertion_order"), "a number"),
    **dict.fromkeys(("disable", "enabled", "selective", "constant"), "true or false"),
    "kind": f"one of {sorted(KINDS)}",
    "queryParams": "a list",
    "selectiveLogic": "0 (AND_ANY), 1 (NOT_ALL), 2 (NOT_ANY) or 3 (AND_ALL)",
    "sticky": "a whole number of turns (32 bits)",
}


def _rules(entry: Mapping[str, Any], world_info: bool) -> tuple[dict[str, Any], str | None]:
    """rolemem's recall rules of a checked entry (次要关键词 and its logic, 常驻, 停留轮数),
    and the name of a field set to no effect (secondary keys of an entry not selective)."""
    secondary_field = "keysecondary" if world_info else "secondary_keys"
    settings = entry if world_info else entry.get("extensions") or {}  # a card's are there
    secondary, selective = entry.get(secondary_field) or [], entry.get("selective", True)
    # (absent or null: 0; 2.0 as 2)
    logic, sticky = (whole_number(settings.get(name)) or 0 for name in ("selectiveLogic", "sticky"))
    rules: dict[str, Any] = {}
    if secondary and selective:
        rules["次要关键词"] = list(secondary)
        rules["次要关键词逻辑"] = LOGICS[logic]
    if entry.get("constant", False):
        rules["常驻"] = True
    if sticky > 0:
        rules["停留轮数"] = sticky
    return rules, secondary_field if secondary and not selective else None


_RULE_NAMES = ("次要关键词", "次要关键词逻辑", "常驻", "停留轮数")
# the SillyTavern fields those rules are read from (_rules)
_RULE_FIELDS = (
    "keysecondary", "secondary_keys", "selective", "constant", "selectiveLogic", "sticky"
)  # fmt: skip


def _write_rules(
    out: dict[str, Any], entry: Mapping[str, Any], extensions: dict[str, Any], world_info: bool
) -> None:
    """The entry's recall rules as SillyTavern writes them (a card keeps the logic and sticky
    under extensions)."""
    settings = out if world_info else extensions
    secondary = list(entry.get("次要关键词") or [])
    out["keysecondary" if world_info else "secondary_keys"] = secondary
    out["selective"] = True if secondary else out.get("selective", False) is True
    settings["selectiveLogic"] = LOGICS.index(entry.get("次要关键词逻辑") or "AND_ANY")
    out["constant"] = bool(entry.get("常驻", False))
    settings["sticky"] = entry.get("停留轮数") or 0


def to_lorebook(document: Mapping[str, Any]) -> dict[str, Any]:
    """rolemem's designer JSON -> the SillyTavern file it came from (its carried fields
    restored), or a World Info file for config written here."""
    ours = (document.get("extensions") or {}).get("sillytavern") or {"layout": "world_info"}
    layout = ours["layout"]
    rows = []
    for kind in KINDS:
        for group, entries in (document.get(kind) or {}).items():
            for entry in entries:
                rows.append(_lorebook_entry(kind, group, entry, layout))
    # imported entries in their book order; entries written here after them, uids counted on
    rows.sort(key=lambda pair: pair[0][0])
    taken = {uid for (_, uid), _ in rows if uid is not None}
    fresh = (n for n in range(len(rows) + len(taken) + 1) if n not in taken and str(n) not in taken)
    rows = [((position, next(fresh) if uid is None else uid), out) for (position, uid), out in rows]
    book = copy.deepcopy(ours.get("book") or {})
    if layout == "world_info":
        for (_, uid), entry in rows:
            if "uid" in entry and entry["uid"] is None:  # written here: numbered now
                entry["uid"] = uid
        book["entries"] = {str(uid): entry for (_, uid), entry in rows}
        return book
    book["entries"] = [entry for _, entry in rows]
    if layout == "card":
        card = book.pop("_card")
        card["data"]["character_book"] = book
        return card
    return book


def _lorebook_entry(
    kind: str, group: str, entry: Mapping[str, Any], layout: str
) -> tuple[tuple[int, Any], dict[str, Any]]:
    extensions = entry.get("extensions") or {}
    carried = copy.deepcopy(extensions.get("sillytavern") or {})
    book = carried.pop("_book", None) or {}
    conditions = [c for c in entry.get("queryParams", []) if c != DISABLED]
    disabled = len(conditions) != len(entry.get("queryParams", []))
    ours = dict(extensions.get("rolemem") or {})
    if kind != "attributes" or ours.get("kind"):
        ours["kind"] = kind
    if conditions or "queryParams" in ours:
        ours["queryParams"] = conditions
    if kind == "events" and (entry.get("日期") or "date" in ours):
        ours["date"] = entry.get("日期", "")
    out_extensions = dict(carried.pop("extensions", {}) or {})
    if ours:
        out_extensions["rolemem"] = ours
    native = not book  # written here, not imported: every field SillyTavern reads
    order = 20 * (entry.get("强度") or 3)
    world_info = layout == "world_info"
    out: dict[str, Any] = dict(carried)
    out["key" if world_info else "keys"] = list(entry.get("关键词", []))
    flag, flagged = ("disable", disabled) if world_info else ("enabled", not disabled)
    values = {"comment": group, "order" if world_info else "insertion_order": order, flag: flagged}
    for name, value in values.items():
        if native or name in book or name == flag and disabled:
            # the file's own value, except where rolemem now says otherwise (disabled)
            out[name] = value if name == flag else book.get(name, value)
    if "name" in book:
        out["name"] = book["name"]
    # the file's own fields stand while they still say what rolemem's do: only the rules'
    # fields are checked (the rest is carried as it is, as the import carried it)
    written = {name: carried[name] for name in _RULE_FIELDS if name in carried}
    if not world_info:  # a card keeps its logic and sticky under extensions
        written["extensions"] = {k: v for k, v in out_extensions.items() if k in _RULE_FIELDS}
    imported, _ = _rules(_checked(layout, written, "entry"), world_info)
    if native or imported != {k: entry[k] for k in _RULE_NAMES if k in entry}:
        _write_rules(out, entry, out_extensions, world_info)
    out["content"] = entry.get("内容", "")
    if (
        out_extensions
        or (not native and not book.get("no_extensions"))
        or (native and not world_info)
    ):
        out["extensions"] = out_extensions
    if native and world_info:
        out.setdefault("uid", None)
    return (book.get("position", 10**9), book.get("uid")), out


def _book_of(doc: Any) -> tuple[str, dict[str, Any], list[tuple[Any, Any]]]:
    """(layout, the book's own fields to carry, [(uid, entry)] in book order)."""
    layout = layout_of(doc)
    if layout is None:
        raise ConfigError(
            "not a SillyTavern lorebook: expected World Info ({entries: {uid: entry}}), a "
            "character card (data.character_book) or a character_book ({entries: [...]})"
        )
    book = copy.deepcopy(dict(doc))
    if layout == "card":  # the rest of the card is carried with its book
        book = {**book["data"].pop("character_book"), "_card": book}
    entries = book.pop("entries", [])
    if layout == "world_info":
        return layout, book, list(entries.items())
    if not isinstance(entries, list):
        raise ConfigError("data.character_book.entries must be a list")
    uids = (e.get("id", i) if isinstance(e, Mapping) else i for i, e in enumerate(entries))
    return layout, book, list(zip(uids, entries, strict=True))
