{#
    The dot product of two lists of numbers: DuckDB's list_dot_product; on PostgreSQL a sum
    over the two lists unnested side by side.
#}
{% macro dot_product(left, right) -%}
    {{- adapter.dispatch('dot_product', 'rolemem')(left, right) -}}
{%- endmacro %}

{% macro default__dot_product(left, right) -%}
    list_dot_product({{ left }}, {{ right }})
{%- endmacro %}

{% macro postgres__dot_product(left, right) -%}
    (select sum(pairs.x * pairs.y) from unnest({{ left }}, {{ right }}) as pairs (x, y))
{%- endmacro %}
