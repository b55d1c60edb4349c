{#
    Stop the query with a readable message built from row values (e.g. a bad line id).
    DuckDB has error(); PostgreSQL the function rolemem_raise(text) that rolemem.engines
    creates (it raises, and types as text); elsewhere a failing cast carries the message.
    Messages start with "rolemem: " so the Python wrapper can tell them from engine errors.
#}
{% macro rolemem_raise(message, type='varchar') %}
    {{- adapter.dispatch('rolemem_raise', 'rolemem')(message, type) -}}
{% endmacro %}

{% macro duckdb__rolemem_raise(message, type) -%}
    error('rolemem: ' || ({{ message }}))
{%- endmacro %}

{#- `type`: what the expression stands for (PostgreSQL types a CASE by its branches) -#}
{% macro postgres__rolemem_raise(message, type) -%}
    cast(rolemem_raise('rolemem: ' || ({{ message }})) as {{ type }})
{%- endmacro %}

{% macro default__rolemem_raise(message, type) -%}
    cast('rolemem: ' || ({{ message }}) as integer)
{%- endmacro %}
