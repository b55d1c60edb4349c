{#
    write_recall_queue for a row that is there (the common case): the same values as an
    UPDATE, which DuckDB runs several times faster than an upsert; no row answered when
    there is none for the save $save_id x character $character_id of player $user_id.
#}
{% macro update_recall_queue() -%}
    update character_recall_queue set
        turn_number = $turn_number,
        queue = $queue,
        updated_at = $now
    where save_id = $save_id and character_id = $character_id and user_id = $user_id
    returning save_id
{%- endmacro %}
