{#
    A prompt template filled in one pass over it: each (placeholder, value) pair's placeholder
    becomes its value where the value is not null (a null keeps the placeholder as written).
    Text that comes in (a value) is never substituted again: each placeholder first becomes a
    private-use character no value keeps, then the values replace those. A block that is empty
    takes its header with it: a header line (ending in 】, ： or :, or a markdown # line)
    directly above a placeholder alone on its line is dropped when the placeholder's value is
    empty or blank (no bare 【经历】 left in the prompt; a wrapping tag such as <events> stays).
    The header rule is a regular expression both engines read alike ((?m): ^ and $ at lines).
    Blank: macro blank_characters.
    `values_unmarked`: the values hold no mark already (the caller cleared them).
#}
{% macro fill_prompt_template(template, pairs, values_unmarked=false) -%}
    {#- the marks: U+E001.. for a value, U+E041.. for a blank one (64 pairs at most), written
        as the characters themselves (a chr() call per mark is an expression to bind per
        statement) -#}
    {%- set unmarked = "regexp_replace(%s, '[" ~ ('%c' % 57345) ~ "-" ~ ('%c' % 57472) ~ "]', '', 'g')" -%}
    {#- values a caller already cleared of the marks are read as they are (fewer expressions
        to bind per statement: the recall statement clears each value once) -#}
    {%- set value_text = "%s" if values_unmarked else unmarked -%}
    {%- for pair in pairs %}replace(replace({% endfor -%}
    regexp_replace(
        {% for pair in pairs %}replace({% endfor -%}
        {{ unmarked % template }}
        {%- for placeholder, value in pairs %},
            {{ placeholder }},
            case
                when ({{ value }}) is null then {{ placeholder }}
                when regexp_replace({{ value }}, '{{ blank_characters() }}', '', 'g') = ''
                    then '{{ '%c' % (57408 + loop.index) }}'
                else '{{ '%c' % (57344 + loop.index) }}'
            end)
        {%- endfor %},
        '(?m)^[ \t]*(?:#[^\n]*|[^\n]*[】：:])[ \t]*\n[ \t]*[{{ '%c' % 57409 }}-{{ '%c' % (57408 + pairs | length) }}][ \t]*$',
        '',
        'g'
    )
    {%- for placeholder, value in pairs %},
        '{{ '%c' % (57344 + loop.index) }}',
        coalesce({{ value_text % value }}, '')),
        '{{ '%c' % (57408 + loop.index) }}',
        coalesce({{ value_text % value }}, ''))
    {%- endfor %}
{%- endmacro %}
