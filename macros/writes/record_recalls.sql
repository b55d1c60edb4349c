{#
    Recalls of one table, each memory once at one time (a batch of one query): the cheaper
    statement (no join: each operator is planned on every call). Each counts once and adds
    the strength bonus. On Citus the batch is one player's ($user_id: macro player_filter), so
    the update runs on that player's shard; an official table (`by_player` false: a reference
    table there) has no player.
#}
{% macro record_recalls(table, by_player=true) -%}
    update {{ table }}
    set
        recall_count = recall_count + 1,
        last_recalled_at = $now,
        strength = strength + $bonus
    where
        id in (select unnest(cast($ids as bigint[])))
        and {{ player_filter('user_id') if by_player else 'true' }}
{%- endmacro %}
