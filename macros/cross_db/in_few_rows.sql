{#
    `value in (subquery)` where the subquery yields a few rows (a save's parent lines): on
    PostgreSQL an array computed once, so an index on the column finds the rows; its `in`
    would hash them and scan the whole table (with nested loops off, as recall runs). DuckDB
    keeps its `in`.
#}
{% macro in_few_rows(value, subquery) -%}
    {{- adapter.dispatch('in_few_rows', 'rolemem')(value, subquery) -}}
{%- endmacro %}

{% macro default__in_few_rows(value, subquery) -%}
    {{ value }} in ({{ subquery }})
{%- endmacro %}

{% macro postgres__in_few_rows(value, subquery) -%}
    {{ value }} = any(array({{ subquery }}))
{%- endmacro %}
