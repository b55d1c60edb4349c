{#
    A system prompt without blank lines and without whitespace at its two ends (what a filled
    template leaves where a block or its header went). Whitespace: ASCII blanks and the
    full-width space U+3000, spelled out (\s differs between the engines).
#}
{% macro tidy_prompt_lines(text) -%}
    {%- set blank = "[ \\t\\n\\r\\f\\v" ~ ('%c' % 12288) ~ "]" -%}
    regexp_replace(
        regexp_replace({{ text }}, '^{{ blank }}+|{{ blank }}+$', '', 'g'),
        '(\n[ \t\r\f\v{{ '%c' % 12288 }}]*)+\n',
        chr(10),
        'g'
    )
{%- endmacro %}
