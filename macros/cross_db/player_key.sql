{#
    A player table's key as an upsert's conflict target names it (`on conflict (...)`): the
    columns `columns` on DuckDB and plain PostgreSQL; on Citus the key leads with the
    player, `user_id` (schema.citus), so the target does too.
#}
{% macro player_key(columns) -%}
    {{- adapter.dispatch('player_key', 'rolemem')(columns) -}}
{%- endmacro %}

{% macro default__player_key(columns) -%}
    {{ columns }}
{%- endmacro %}

{% macro citus__player_key(columns) -%}
    user_id, {{ columns }}
{%- endmacro %}
