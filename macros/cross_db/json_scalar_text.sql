{#
    Text and number views of a JSON scalar, so conditions compare without re-parsing JSON:
    numbers compare as numbers only when both sides are JSON numbers; anything else compares
    as text (a JSON string's text is unquoted; true/false compare as 'true'/'false').
    DuckDB's json_type says 'ARRAY', 'BIGINT'…; PostgreSQL's json_typeof says 'array',
    'number'…: each engine names its own types.
#}
{% macro json_scalar_text(json_value) -%}
    case
        when {{ json_type_is(json_value, 'null') }} then null
        else {{ json_text(json_value) }}
    end
{%- endmacro %}
