{#
    A character's loop state after an observation: its scene (kept while `keep_scene`), the
    time, the roles; an extraction clears the failure count and the last error (the status
    says what is wrong now).
#}
{% macro upsert_loop_state() -%}
    insert into memory_loop_state (
        save_id, target_key, user_id, agent_id, last_scene, last_observed_at, role_id,
        script_role_id, failed_attempts
    )
    values (
        $save_id, $target_key, $user_id, $agent_id, $scene, $now, $role_id, $script_role_id, 0
    )
    on conflict ({{ player_key("save_id, target_key") }}) do update set
        user_id = excluded.user_id,
        agent_id = excluded.agent_id,
        last_scene = case
            when $keep_scene then memory_loop_state.last_scene else excluded.last_scene
        end,
        last_observed_at = excluded.last_observed_at,
        role_id = excluded.role_id,
        script_role_id = excluded.script_role_id,
        failed_attempts = case
            when $extracted then 0 else memory_loop_state.failed_attempts
        end,
        last_error = case when $extracted then null else memory_loop_state.last_error end,
        last_error_at = case
            when $extracted then null else memory_loop_state.last_error_at
        end
{%- endmacro %}
