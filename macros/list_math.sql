{#
    Sums over lists of numbers: DuckDB's list functions; on PostgreSQL aggregates over the
    unnested elements.
#}
{% macro list_total(list) -%}
    {{- adapter.dispatch('list_total', 'rolemem')(list) -}}
{%- endmacro %}

{% macro duckdb__list_total(list) -%}
    list_sum({{ list }})
{%- endmacro %}

{% macro postgres__list_total(list) -%}
    (select sum(element) from unnest({{ list }}) as elements (element))
{%- endmacro %}

{% macro list_length(list) -%}
    {{- adapter.dispatch('list_length', 'rolemem')(list) -}}
{%- endmacro %}

{% macro duckdb__list_length(list) -%}
    len({{ list }})
{%- endmacro %}

{% macro postgres__list_length(list) -%}
    cardinality({{ list }})
{%- endmacro %}

{% macro dot_product(left, right) -%}
    {{- adapter.dispatch('dot_product', 'rolemem')(left, right) -}}
{%- endmacro %}

{% macro duckdb__dot_product(left, right) -%}
    list_dot_product({{ left }}, {{ right }})
{%- endmacro %}

{% macro postgres__dot_product(left, right) -%}
    (select sum(pairs.x * pairs.y) from unnest({{ left }}, {{ right }}) as pairs (x, y))
{%- endmacro %}

{#- A list of text as DuckDB prints it, [a, b], on every engine (PostgreSQL prints {a,b}) -#}
{% macro list_text(list) -%}
    {{- adapter.dispatch('list_text', 'rolemem')(list) -}}
{%- endmacro %}

{% macro duckdb__list_text(list) -%}
    cast({{ list }} as varchar)
{%- endmacro %}

{% macro postgres__list_text(list) -%}
    ('[' || array_to_string({{ list }}, ', ') || ']')
{%- endmacro %}
