{#
    A character's loop state after an observation: its scene (kept while `keep_scene`), the
    time, the roles; an extraction clears the failure count, the last error and the back-off
    (the status says what is wrong now). No row answered when there is none for ($save_id, $target_key)
    of player $user_id: upsert_loop_state makes it, and this runs again.
#}
{% macro update_loop_state() -%}
    update memory_loop_state set
        agent_id = $agent_id,
        last_scene = case when $keep_scene then last_scene else $scene end,
        last_observed_at = $now,
        role_id = $role_id,
        script_role_id = $script_role_id,
        failed_attempts = case when $extracted then 0 else failed_attempts end,
        last_error = case when $extracted then null else last_error end,
        last_error_at = case when $extracted then null else last_error_at end,
        next_attempt_at = case when $extracted then null else next_attempt_at end
    where save_id = $save_id and target_key = $target_key and user_id = $user_id
    returning save_id
{%- endmacro %}
