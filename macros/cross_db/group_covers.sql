{#
    An aggregate: whether a group's `item` values (of its rows where `condition`) include every
    non-null `value` of the group (null when the group has no item or no value). DuckDB's
    list_has_all; PostgreSQL's @>, which compares every pair, over the values taken once each.
#}
{% macro group_covers(item, condition, value) -%}
    {{- adapter.dispatch('group_covers', 'rolemem')(item, condition, value) -}}
{%- endmacro %}

{% macro default__group_covers(item, condition, value) -%}
    list_has_all(
        array_agg({{ item }}) filter (where {{ condition }}),
        array_agg({{ value }}) filter (where {{ value }} is not null)
    )
{%- endmacro %}

{% macro postgres__group_covers(item, condition, value) -%}
    (
        array_agg({{ item }}) filter (where {{ condition }})
        @> array_agg(distinct {{ value }}) filter (where {{ value }} is not null)
    )
{%- endmacro %}
