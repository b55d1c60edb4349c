{#
    What counts as blank in text a player or designer wrote, as a regular-expression
    character class to splice into a pattern: the ASCII blanks (space, tab, newline, return,
    form feed, vertical tab) and the full-width space U+3000 that Chinese input methods type.
    Spelled out, not \s: PostgreSQL's \s takes more Unicode spaces under a UTF-8 collation,
    DuckDB's (RE2) neither those nor a vertical tab. `newline` false: the same but a newline
    (blank within a line). On DuckDB U+3000 is written as RE2's escape, not as itself: DuckDB
    turns Unicode spaces in a statement into ASCII ones, string literals included once a
    comment before them holds an apostrophe (as the composed models' comments do).
#}
{% macro blank_characters(newline=true) -%}
    {{- adapter.dispatch('blank_characters', 'rolemem')(newline) -}}
{%- endmacro %}

{% macro default__blank_characters(newline) -%}
    [ \t{{ '\\n' if newline else '' }}\r\f\v\x{3000}]
{%- endmacro %}

{% macro postgres__blank_characters(newline) -%}
    [ \t{{ '\\n' if newline else '' }}\r\f\v{{ '%c' % 12288 }}]
{%- endmacro %}
