{#
    Stop the query with a readable message built from row values (e.g. a bad line id).
    DuckDB has error(); PostgreSQL the function rolemem_raise(text) that rolemem.engines
    creates (it raises, and types as text); elsewhere a failing cast carries the message.
    Messages start with "rolemem: " so the Python wrapper can tell them from engine errors.
#}
{% macro rolemem_raise(message) %}
    {{- adapter.dispatch('rolemem_raise', 'rolemem')(message) -}}
{% endmacro %}

{% macro duckdb__rolemem_raise(message) -%}
    error('rolemem: ' || ({{ message }}))
{%- endmacro %}

{% macro postgres__rolemem_raise(message) -%}
    rolemem_raise('rolemem: ' || ({{ message }}))
{%- endmacro %}

{% macro default__rolemem_raise(message) -%}
    cast('rolemem: ' || ({{ message }}) as integer)
{%- endmacro %}
