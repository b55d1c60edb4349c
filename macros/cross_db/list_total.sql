{#
    Sums over lists of numbers: DuckDB's list functions; on PostgreSQL aggregates over the
    unnested elements.
#}
{% macro list_total(list) -%}
    {{- adapter.dispatch('list_total', 'rolemem')(list) -}}
{%- endmacro %}

{% macro default__list_total(list) -%}
    list_sum({{ list }})
{%- endmacro %}

{% macro postgres__list_total(list) -%}
    (select sum(element) from unnest({{ list }}) as elements (element))
{%- endmacro %}
