{#
    The sticky recall queue of the save $save_id x character $character_id after a recall:
    its turn $turn_number and the queue $queue (JSON). No row answered when there is none
    for player $user_id: write_recall_queue makes it, and this runs again.
#}
{% macro update_recall_queue() -%}
    update character_recall_queue set
        turn_number = $turn_number,
        queue = $queue,
        updated_at = $now
    where save_id = $save_id and character_id = $character_id and user_id = $user_id
    returning save_id
{%- endmacro %}
