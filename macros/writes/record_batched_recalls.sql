{#
    A batch's recalls of one table, as if applied one by one in the order of their times (the
    batch's queries arrived together): each recall counts (recall_count + 1 and the strength
    bonus), the latest sets last_recalled_at. On Citus the batch is one player's ($user_id: macro
    player_filter), so the update runs on that player's shard; an official table (`by_player`
    false: a reference table there) has no player.
#}
{% macro record_batched_recalls(table, by_player=true) -%}
    update {{ table }}
    set
        recall_count = recall_count + recalled.times,
        last_recalled_at = recalled.last_recalled_at,
        strength = strength + recalled.times * $bonus
    from (
        select
            item_id,
            count(*) as times,
            max(recalled_at) as last_recalled_at
        from (
            select
                unnest(cast($ids as bigint[])) as item_id,
                unnest(cast($recalled_at as timestamp[])) as recalled_at
        ) as recalls
        group by item_id
    ) as recalled
    where
        {{ table }}.id = recalled.item_id
        and {{ player_filter(table ~ '.user_id') if by_player else 'true' }}
{%- endmacro %}
