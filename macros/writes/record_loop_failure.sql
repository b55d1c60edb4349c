{#
    A failed extraction: the error, one more failed attempt and when the next may be made
    ($next_attempt_at, the back-off; null: at once). The scene is not moved, so the next
    observation sends the same batch.
#}
{% macro record_loop_failure() -%}
    insert into memory_loop_state (
        save_id, target_key, user_id, agent_id, last_observed_at, role_id, script_role_id,
        last_error, last_error_at, failed_attempts, next_attempt_at
    )
    values (
        $save_id, $target_key, $user_id, $agent_id, $now, $role_id, $script_role_id,
        $error, $now, 1, $next_attempt_at
    )
    on conflict ({{ player_key("save_id, target_key") }}) do update set
        last_error = excluded.last_error,
        last_error_at = excluded.last_error_at,
        failed_attempts = coalesce(memory_loop_state.failed_attempts, 0) + 1,
        next_attempt_at = excluded.next_attempt_at
{%- endmacro %}
