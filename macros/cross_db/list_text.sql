{#
    A list of text as DuckDB prints it, [a, b], on every engine (PostgreSQL prints {a,b}).
#}
{% macro list_text(list) -%}
    {{- adapter.dispatch('list_text', 'rolemem')(list) -}}
{%- endmacro %}

{% macro default__list_text(list) -%}
    cast({{ list }} as varchar)
{%- endmacro %}

{% macro postgres__list_text(list) -%}
    ('[' || array_to_string({{ list }}, ', ') || ']')
{%- endmacro %}
