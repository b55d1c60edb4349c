{#
    A list with a value put first: DuckDB's list_prepend, PostgreSQL's array_prepend.
#}
{% macro list_prepend(value, list) -%}
    {{- adapter.dispatch('list_prepend', 'rolemem')(value, list) -}}
{%- endmacro %}

{% macro default__list_prepend(value, list) -%}
    list_prepend({{ value }}, {{ list }})
{%- endmacro %}

{% macro postgres__list_prepend(value, list) -%}
    array_prepend({{ value }}, {{ list }})
{%- endmacro %}
