{#
    Save $save_id's row as the save lifecycle reads it (its owner, tip, fork point, the
    player's name and whether it is being erased). On Citus the read stays on the shard of
    its player $user_id, where another player's save is not found.
#}
{% macro owned_save_row() -%}
    select
        id as save_id,
        user_id,
        name,
        last_message_id as tip_line_id,
        forked_from_line_id,
        user_name,
        erasing
    from save
    where id = $save_id and {{ player_filter('user_id') }}
{%- endmacro %}
