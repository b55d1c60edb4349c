{#
    Every column of `relation`'s rows, one object per row, as the Python wrapper reads a list
    of dicts: a DuckDB list of structs, a PostgreSQL json array.
#}
{% macro list_of_rows(relation, order_by) -%}
    {{- adapter.dispatch('list_of_rows', 'rolemem')(relation, order_by) -}}
{%- endmacro %}

{% macro default__list_of_rows(relation, order_by) -%}
    list({{ relation }} order by {{ order_by }})
{%- endmacro %}

{% macro postgres__list_of_rows(relation, order_by) -%}
    json_agg({{ relation }} order by {{ order_by }})
{%- endmacro %}
