"""The prompt template rules written out in Python: macros label_memory_blocks,
fill_prompt_template, prompt_marks_removed and tidy_prompt_lines, and the columns of model
character_memory_prompts built from them. `RecallResult.fill` / `labelled` use them, and so
does a recall on the embedded store, whose statement then plans none of their expressions
(about 7 ms a recall: each regular expression is compiled on every call). The macros stay the
rule dbt and PostgreSQL read; test_prompt_fill_in_python holds the two equal."""

from __future__ import annotations

import re
from collections.abc import Sequence

BLOCK_PLACEHOLDERS = (
    "{{character_memory_attributes}}",
    "{{character_memory_event}}",
    "{{character_dialogue_style}}",
)
_HEADERS = ("【记忆单元】", "【记忆事件】", "【角色参考语料】")
# the macros' marks: a value's U+E001.., a blank value's U+E041.. (64 pairs at most), and
# U+F8FF, the dynamic memory's place
_VALUE_MARK, _BLANK_MARK, DYNAMIC_MARK = 0xE000, 0xE040, "\uf8ff"
MAX_PLACEHOLDERS = 64
_FILL_MARKS = re.compile("[\ue001-\ue080]")
_ALL_MARKS = re.compile("[\ue001-\ue080\uf8ff]")
# macro blank_characters: the ASCII blanks and the full-width space (not \s: see the macro)
_BLANKS = " \t\n\r\f\v\u3000"
_ONLY_BLANK = re.compile(f"[{_BLANKS}]*")
_BLANK_LINES = re.compile("(\n[ \t\r\f\v\u3000]*)+\n")
# a header line (ending in 】, ： or :, or a markdown # line) above `mark` alone on its line;
# the line's leading blanks possessive (*+): Python's re backtracks where DuckDB's RE2 does not,
# and a line of 20,000 blanks took seconds
_HEADER = r"^[ \t]*+(?:#[^\n]*|[^\n]*[】：:])[ \t]*\n[ \t]*{mark}[ \t]*$"
_DYNAMIC_HEADER = re.compile(_HEADER.format(mark=DYNAMIC_MARK), re.MULTILINE)


def labelled(template: str) -> str:
    """Macro label_memory_blocks: `template` as it is when it places any block; else with the
    three appended, each under its header."""
    if any(placeholder in template for placeholder in BLOCK_PLACEHOLDERS):
        return template
    return template + "".join(
        f"\n{header}\n{placeholder}"
        for header, placeholder in zip(_HEADERS, BLOCK_PLACEHOLDERS, strict=True)
    )


def marks_removed(text: str | None) -> str | None:
    """Macro prompt_marks_removed."""
    return None if text is None else _ALL_MARKS.sub("", text)


def tidy(text: str) -> str:
    """Macro tidy_prompt_lines: no blank lines, no blanks at either end."""
    return _BLANK_LINES.sub("\n", text.strip(_BLANKS))


def fill(
    template: str, pairs: Sequence[tuple[str, str | None]], values_unmarked: bool = False
) -> str:
    """Macro fill_prompt_template: each placeholder becomes its value (a None value keeps the
    placeholder) in one pass, an empty block's header line going with it."""
    if not isinstance(template, str):
        raise TypeError("template must be a string")
    if len(pairs) > MAX_PLACEHOLDERS:  # the macro's marks
        raise TypeError(f"at most {MAX_PLACEHOLDERS} placeholders can be filled at once")
    text = _FILL_MARKS.sub("", template)
    for index, (placeholder, value) in enumerate(pairs, start=1):
        if value is None or not placeholder:  # SQL's replace of '' changes nothing
            continue
        blank = _ONLY_BLANK.fullmatch(value) is not None
        text = text.replace(placeholder, chr((_BLANK_MARK if blank else _VALUE_MARK) + index))
    if pairs:
        last = chr(_BLANK_MARK + len(pairs))
        header = re.compile(_HEADER.format(mark=f"[\ue041-{last}]"), re.MULTILINE)
        text = header.sub("", text)
    for index, (placeholder, value) in enumerate(pairs, start=1):
        if value is None or not placeholder:
            continue
        given = value if values_unmarked else _FILL_MARKS.sub("", value)
        text = text.replace(chr(_VALUE_MARK + index), given)
        text = text.replace(chr(_BLANK_MARK + index), given)
    return text


def prompts(
    template: str | None,
    blocks: Sequence[str | None],
    user_name: str | None,
    char_name: str | None,
) -> tuple[str | None, str | None, str | None]:
    """Model character_memory_prompts' system_prompt, prompt_before_dynamic and
    prompt_after_dynamic for a request's template, its three `blocks` and names."""
    if template is None:
        return None, None, None
    pairs = [
        *zip(BLOCK_PLACEHOLDERS, (marks_removed(block) for block in blocks), strict=True),
        ("{{dynamic_memory}}", DYNAMIC_MARK),
        ("{{user}}", marks_removed(user_name)),
        ("{{char}}", marks_removed(char_name)),
    ]
    marked = fill(labelled(template), pairs, values_unmarked=True)
    marked_prompt = tidy(marked)
    system_prompt = tidy(_DYNAMIC_HEADER.sub("", marked).replace(DYNAMIC_MARK, ""))
    before, found, after = marked_prompt.partition(DYNAMIC_MARK)
    if not found:
        return system_prompt, None, None
    # the first place only: the memory is told once
    return system_prompt, before, after.replace(DYNAMIC_MARK, "")
