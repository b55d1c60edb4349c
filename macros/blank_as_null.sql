{#
    Optional text that is empty or only whitespace counts as absent (the memory-builder rule).
    Non-blank text is kept exactly as written. Dispatched: the regex call differs by engine.
#}
{% macro blank_as_null(expression) %}
    {{- adapter.dispatch('blank_as_null', 'rolemem')(expression) -}}
{% endmacro %}

{% macro duckdb__blank_as_null(expression) -%}
    case when regexp_full_match({{ expression }}, '[\s\x{3000}]*') then null else {{ expression }} end
{%- endmacro %}

{% macro default__blank_as_null(expression) -%}
    case when {{ expression }} ~ '^[\s\u3000]*$' then null else {{ expression }} end
{%- endmacro %}
