{#
    The sticky recall queue of the save $save_id x character $character_id as stored: its
    recall turns so far and the queue (JSON); no row before its first recall. On Citus the
    read names the save's player $user_id (macro player_filter): one shard.
#}
{% macro read_recall_queue() -%}
    select turn_number, queue
    from character_recall_queue
    where save_id = $save_id and character_id = $character_id and {{ player_filter('user_id') }}
{%- endmacro %}
