{#
    Whether a list holds every value of another (null when either is null): DuckDB's
    list_has_all; PostgreSQL's @>. The values hold no null (the engines differ on one).
#}
{% macro list_has_all(list, values) -%}
    {{- adapter.dispatch('list_has_all', 'rolemem')(list, values) -}}
{%- endmacro %}

{% macro default__list_has_all(list, values) -%}
    list_has_all({{ list }}, {{ values }})
{%- endmacro %}

{% macro postgres__list_has_all(list, values) -%}
    ({{ list }} @> {{ values }})
{%- endmacro %}
