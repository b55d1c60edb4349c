{#
    A system prompt without blank lines and without whitespace at its two ends (what a filled
    template leaves where a block or its header went). Whitespace: macro blank_characters.
#}
{% macro tidy_prompt_lines(text) -%}
    {%- set blank = blank_characters() -%}
    regexp_replace(
        regexp_replace({{ text }}, '^{{ blank }}+|{{ blank }}+$', '', 'g'),
        '(\n{{ blank_characters(newline=false) }}*)+\n',
        chr(10),
        'g'
    )
{%- endmacro %}
