{#
    Whether a JSON value is of `kind` ('null', 'number' or 'array'): DuckDB's json_type
    says 'ARRAY', 'BIGINT'…; PostgreSQL's json_typeof says 'array', 'number'….
#}
{% macro json_type_is(json_value, kind) -%}
    {{- adapter.dispatch('json_type_is', 'rolemem')(json_value, kind) -}}
{%- endmacro %}

{% macro default__json_type_is(json_value, kind) -%}
    {%- if kind == 'number' -%}
        json_type({{ json_value }}) in ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')
    {%- else -%}
        json_type({{ json_value }}) = '{{ kind | upper }}'
    {%- endif -%}
{%- endmacro %}

{% macro postgres__json_type_is(json_value, kind) -%}
    json_typeof({{ json_value }}) = '{{ kind }}'
{%- endmacro %}
