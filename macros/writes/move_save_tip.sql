{#
    A save's tip moved to its newest line (after lines were appended). On PostgreSQL the same
    statement gives the save's lines the game wrote without a player the save's (a data-
    modifying CTE: for a save with a player, found by the partial index ix_line_unowned,
    usually empty; for a save without one, a one-time filter skips it). DuckDB has no such
    CTE, and fills them when it refreshes the save's history. On Citus every line has its
    player (the distribution column, never updated): the save's row alone, on its shard.
#}
{% macro move_save_tip() -%}
    {{- adapter.dispatch('move_save_tip', 'rolemem')() -}}
{%- endmacro %}

{% macro default__move_save_tip() -%}
    update save
    set last_message_id = $tip
    where id = $id and {{ player_filter('user_id') }}
{%- endmacro %}

{% macro citus__move_save_tip() -%}
    {{- default__move_save_tip() -}}
{%- endmacro %}

{% macro postgres__move_save_tip() -%}
    with unowned_lines as (
        update line
        set user_id = (select owners.user_id from save as owners where owners.id = $id)
        where
            line.save_id = $id
            and line.user_id is null
            and exists (
                select 1 from save as owners
                where owners.id = $id and owners.user_id is not null
            )
    )

    update save
    set last_message_id = $tip
    where id = $id
{%- endmacro %}
