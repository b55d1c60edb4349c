{#
    What counts as blank in text a player or designer wrote, as a regular-expression
    character class to splice into a pattern: the ASCII blanks (space, tab, newline, return,
    form feed, vertical tab) and the full-width space U+3000 that Chinese input methods type.
    Spelled out, not \s: PostgreSQL's \s takes more Unicode spaces under a UTF-8 collation,
    DuckDB's (RE2) neither those nor a vertical tab. `newline` false: the same but a newline
    (blank within a line).
#}
{% macro blank_characters(newline=true) -%}
    [ \t{{ '\\n' if newline else '' }}\r\f\v{{ '%c' % 12288 }}]
{%- endmacro %}
