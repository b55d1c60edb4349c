{#
    The delete of the saves $save_ids that have no line left (a save's lines go first, macro
    delete_save_lines, in an earlier transaction on DuckDB), one row answered per save. On
    Citus the saves are the player $user_id's (one shard).
#}
{% macro delete_empty_saves() -%}
    delete from save
    where
        id in (select unnest(cast($save_ids as bigint[])))
        and {{ player_filter('save.user_id') }}
        and not exists (
            select 1
            from line
            where line.save_id = save.id and {{ player_filter('line.user_id') }}
        )
    returning 1
{%- endmacro %}
