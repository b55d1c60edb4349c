{#
    Where a save's chain leaves it when its tip is $line_id: walk up from the line while it
    is the save's own; the first line of another save is the fork point (none: the save's own
    root). `is_shared`: $line_id is on the history the save shares through its current fork
    point. Each walk takes at most $budget steps. On Citus both walks and the read of the
    line's save stay on the shard of the save's player $user_id (a fork stays within one
    player).
#}
{% macro save_tip_target() -%}
    with recursive
    up (line_id, parent_line_id, save_id, depth) as (
        select line.id, line.parent_line_id, line.save_id, 0 from line
        where line.id = $line_id and {{ player_filter('line.user_id') }}
        union all
        select line.id, line.parent_line_id, line.save_id, up.depth + 1
        from up
        inner join line on line.id = up.parent_line_id
        where
            up.save_id = $save_id
            and up.depth < $budget
            and {{ player_filter('line.user_id') }}
    ),

    shared (line_id, parent_line_id, depth) as (
        select line.id, line.parent_line_id, 0 from line
        where line.id = $fork_line_id and {{ player_filter('line.user_id') }}
        union all
        select line.id, line.parent_line_id, shared.depth + 1
        from shared
        inner join line on line.id = shared.parent_line_id
        where shared.depth < $budget and {{ player_filter('line.user_id') }}
    )

    select
        (select save_id from up where depth = 0) as line_save_id,
        (
            select save.user_id from save
            where
                save.id = (select up.save_id from up where up.depth = 0)
                and {{ player_filter('save.user_id') }}
        ) as line_save_user_id,
        (select up.line_id from up where up.save_id <> $save_id order by up.depth limit 1)
            as fork_line_id,
        (select count(*) from shared where line_id = $line_id) > 0 as is_shared
{%- endmacro %}
