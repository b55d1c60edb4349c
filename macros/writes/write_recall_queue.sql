{#
    The sticky recall queue of the save $save_id x character $character_id after a recall:
    its turn $turn_number and the queue $queue (JSON), written over the row before.
#}
{% macro write_recall_queue() -%}
    insert into character_recall_queue (
        save_id, character_id, user_id, turn_number, queue, updated_at
    )
    values ($save_id, $character_id, $user_id, $turn_number, $queue, $now)
    on conflict ({{ player_key("save_id, character_id") }}) do update set
        user_id = excluded.user_id,
        turn_number = excluded.turn_number,
        queue = excluded.queue,
        updated_at = excluded.updated_at
{%- endmacro %}
