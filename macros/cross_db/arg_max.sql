{#
    The value of the row with the largest (arg_max) or smallest (arg_min) key, rows with a null
    key ignored: DuckDB's aggregates; PostgreSQL has none, an ordered array_agg stands in.
#}
{% macro arg_max(value, key) -%}
    {{- adapter.dispatch('arg_max', 'rolemem')(value, key, 'desc') -}}
{%- endmacro %}

{% macro default__arg_max(value, key, direction) -%}
    {{ 'arg_max' if direction == 'desc' else 'arg_min' }}({{ value }}, {{ key }})
{%- endmacro %}

{% macro postgres__arg_max(value, key, direction) -%}
    (array_agg({{ value }} order by {{ key }} {{ direction }})
        filter (where {{ key }} is not null))[1]
{%- endmacro %}
