{#
    A system prompt without blank lines and without whitespace at its two ends (what a filled
    template leaves where a block or its header went). Whitespace: \s and the full-width
    space U+3000.
#}
{% macro tidy_prompt_lines(text) -%}
    regexp_replace(
        regexp_replace(
            {{ text }}, '^[\s{{ '%c' % 12288 }}]+|[\s{{ '%c' % 12288 }}]+$', '', 'g'
        ),
        '(\n[ \t\r\f\v{{ '%c' % 12288 }}]*)+\n',
        chr(10),
        'g'
    )
{%- endmacro %}
