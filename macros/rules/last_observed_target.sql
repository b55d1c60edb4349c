{#
    The character memory_status answers for when the request does not name it fully (no
    agent, or no role): the one the memory loop observed last on the save $save_id, among
    those the request names ($agent_id, $role_id, $script_role_id; each null: any). On Citus
    the read names the save's player $user_id (macro player_filter): one shard.
#}
{% macro last_observed_target() -%}
    select agent_id, role_id, script_role_id
    from memory_loop_state
    where
        save_id = $save_id
        and {{ player_filter('user_id') }}
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)
        and (cast($role_id as bigint) is null or role_id = $role_id)
        and (
            cast($script_role_id as varchar) is null
            or script_role_id = $script_role_id
        )
    order by last_observed_at desc
    limit 1
{%- endmacro %}
