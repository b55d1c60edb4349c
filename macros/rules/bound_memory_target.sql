{#
    The caller's one character, standing in for the batch model int_memory_targets: the
    save $save_id, the role ($role_id / $script_role_id / $display_name), the player's name
    the request gives ($user_name) and the save's (`save_user_name`: an expression, bound for
    given lines, read from the save for a stored one), whether the context emotion is used.
#}
{% macro bound_memory_target(save_user_name) -%}
    select
        cast($save_id as bigint) as save_id,
        'caller' as target_key,
        cast($role_id as bigint) as target_role_id,
        cast($script_role_id as varchar) as target_script_role_id,
        cast($display_name as varchar) as target_display_name,
        cast($user_name as varchar) as request_user_name,
        cast({{ save_user_name }} as varchar) as save_user_name,
        cast($context_emotion as boolean) as use_context_emotion,
        cast(null as bigint) as resume_line_position,
        cast(null as bigint) as resume_message_index
{%- endmacro %}
