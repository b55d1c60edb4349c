{#
    The continuous percentile `fraction` (0-1) of an aggregate's values: DuckDB's
    quantile_cont, PostgreSQL's ordered-set percentile_cont.
#}
{% macro percentile(expression, fraction) -%}
    {{- adapter.dispatch('percentile', 'rolemem')(expression, fraction) -}}
{%- endmacro %}

{% macro default__percentile(expression, fraction) -%}
    quantile_cont({{ expression }}, {{ fraction }})
{%- endmacro %}

{% macro postgres__percentile(expression, fraction) -%}
    percentile_cont({{ fraction }}) within group (order by {{ expression }})
{%- endmacro %}
