{#
    The number of elements of a list: DuckDB's len, PostgreSQL's cardinality.
#}
{% macro list_length(list) -%}
    {{- adapter.dispatch('list_length', 'rolemem')(list) -}}
{%- endmacro %}

{% macro default__list_length(list) -%}
    len({{ list }})
{%- endmacro %}

{% macro postgres__list_length(list) -%}
    cardinality({{ list }})
{%- endmacro %}
