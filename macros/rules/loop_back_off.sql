{#
    A save x character's failed extractions since its last success and the end of its
    back-off (save $save_id, character $target_key, player $user_id), as stored: every
    process reads the same.
#}
{% macro loop_back_off() -%}
    select failed_attempts, next_attempt_at
    from memory_loop_state
    where save_id = $save_id and target_key = $target_key and user_id = $user_id
{%- endmacro %}
