{#
    The saves $save_ids and, transitively, the saves they were forked from (their lines are
    shared), as one sorted list. On Citus every read names the saves' player $save_user_id
    (macro player_filter): the walk runs on that player's shard (a fork stays within one
    player).
#}
{% macro save_lineage() -%}
    with recursive lineage (save_id) as (
        select unnest(cast($save_ids as bigint[]))
        union
        select line.save_id
        from lineage
        inner join save
            on
                save.id = lineage.save_id
                and {{ player_filter('save.user_id', 'save_user_id') }}
        inner join line
            on
                line.id = save.forked_from_line_id
                and {{ player_filter('line.user_id', 'save_user_id') }}
    )

    select list(save_id order by save_id) from lineage
{%- endmacro %}
