{#
    Optional text that is empty or only whitespace counts as absent (the memory-builder rule).
    Non-blank text is kept exactly as written. Whitespace: ASCII blanks and the full-width
    space U+3000 that Chinese input methods type (macro blank_characters), the same on both
    engines. Dispatched: the trim/regex call differs by engine.
#}
{% macro blank_as_null(expression) %}
    {{- adapter.dispatch('blank_as_null', 'rolemem')(expression) -}}
{% endmacro %}

{% macro duckdb__blank_as_null(expression) -%}
    case
        when trim({{ expression }}, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)
            || chr(12288)) = '' then null
        else {{ expression }}
    end
{%- endmacro %}

{% macro default__blank_as_null(expression) -%}
    case when {{ expression }} ~ '^{{ blank_characters() }}*$' then null else {{ expression }} end
{%- endmacro %}
