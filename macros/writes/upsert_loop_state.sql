{#
    A character's loop state row for ($save_id, $target_key), made if there is none (a
    change of player moves it to $user_id); update_loop_state then writes its values, the
    one place that says them.
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
        user_id = excluded.user_id
{%- endmacro %}
