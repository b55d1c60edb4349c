{#
    What a cached context window of the save $save_id x character ($role_id /
    $script_role_id) depends on, read now: a window whose plan read the same is current.
    Lines are append-only and the window depends only on the chain (named by its tip), the
    lines extracted for the character (the player's $user_id, on any save: lines are only
    ever added), the save's own batches and the window settings; a window whose chain has a
    memory cut off it is never kept. On Citus each read names the player $user_id (macro
    player_filter).
#}
{% macro context_window_version() -%}
    {%- set target_key = memory_target_key(
        'cast($role_id as bigint)', 'cast($script_role_id as varchar)'
    ) -%}
    select
        (
            select last_message_id from save where id = $save_id and {{ player_filter('user_id') }}
        ) as tip_line_id,
        (
            select list(last_line_id order by last_line_id)
            from memory_extraction_batch
            where
                save_id = $save_id
                and target_key = {{ target_key }}
                and {{ player_filter('user_id') }}
        ) as batch_last_line_ids,
        (
            select count(*) from memory_extracted_line
            where user_id = $user_id and target_key = {{ target_key }}
        ) as extracted_line_count
{%- endmacro %}
