{#
    Whether a list holds a value (null when the value is null): DuckDB's list_contains;
    PostgreSQL's = any.
#}
{% macro list_has(list, value) -%}
    {{- adapter.dispatch('list_has', 'rolemem')(list, value) -}}
{%- endmacro %}

{% macro default__list_has(list, value) -%}
    list_contains({{ list }}, {{ value }})
{%- endmacro %}

{% macro postgres__list_has(list, value) -%}
    case when {{ value }} is null then null else coalesce({{ value }} = any({{ list }}), false) end
{%- endmacro %}
