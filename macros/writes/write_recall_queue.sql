{#
    The sticky recall queue row of the save $save_id x character $character_id, made if
    there is none (a change of player moves it to $user_id); update_recall_queue then writes
    its turn and queue, the one place that says them.
#}
{% macro write_recall_queue() -%}
    insert into character_recall_queue (
        save_id, character_id, user_id, turn_number, queue, updated_at
    )
    values ($save_id, $character_id, $user_id, $turn_number, $queue, $now)
    on conflict ({{ player_key("save_id, character_id") }}) do update set
        user_id = excluded.user_id
{%- endmacro %}
