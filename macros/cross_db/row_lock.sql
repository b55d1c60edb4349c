{#
    Lock the rows a select reads until the transaction ends (`for update`), where another
    process may write them meanwhile: PostgreSQL's service processes. DuckDB has one writing
    process per file and detects conflicting writes itself: nothing to add.
#}
{% macro row_lock() -%}
    {{- adapter.dispatch('row_lock', 'rolemem')() -}}
{%- endmacro %}

{% macro default__row_lock() -%}
{%- endmacro %}

{% macro postgres__row_lock() -%}
    for update
{%- endmacro %}
