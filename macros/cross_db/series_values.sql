{#
    The integers `low` … `high` as a select list's set-returning expression: the row it is
    selected on, once per value (none when high < low). In the select list, not a lateral
    join: DuckDB plans a lateral series over a relation as a delim join of several operators,
    each planned on every call. Dispatched: DuckDB unnests its series' list, PostgreSQL's
    generate_series returns the rows itself.
#}
{% macro series_values(low, high) -%}
    {{- adapter.dispatch('series_values', 'rolemem')(low, high) -}}
{%- endmacro %}

{% macro default__series_values(low, high) -%}
    unnest(generate_series({{ low }}, {{ high }}))
{%- endmacro %}

{% macro postgres__series_values(low, high) -%}
    generate_series({{ low }}, {{ high }})
{%- endmacro %}
