{#
    A condition naming the statement's player, `column = $<parameter>` (default $user_id), on
    Citus, where it routes the statement to that player's shard (every player table is
    distributed by `user_id`): `true` elsewhere, where a game may write lines without a
    player and nothing routes.
#}
{% macro player_filter(column, parameter='user_id') -%}
    {{- adapter.dispatch('player_filter', 'rolemem')(column, parameter) -}}
{%- endmacro %}

{% macro default__player_filter(column, parameter) -%}
    true
{%- endmacro %}

{% macro citus__player_filter(column, parameter) -%}
    {{ column }} = ${{ parameter }}
{%- endmacro %}
