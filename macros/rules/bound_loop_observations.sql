{#
    The caller's observations, standing in for the batch model int_loop_observations: each
    of `fields` (name: DuckDB type) bound as one list with a position per observation, the
    character's key by the models' rule (macro memory_target_key), and the scene the loop
    last saw. Only the batch's saves' states are read (a join with the whole table scans every
    save's state); on Citus, of the batch's player $save_user_id (macro player_filter).
#}
{% macro bound_loop_observations(fields) -%}
    select
        observations.save_id,
        observations.target_key,
        observations.role_id as target_role_id,
        observations.script_role_id as target_script_role_id,
        observations.user_id,
        observations.agent_id,
        observations.scene,
        states.last_scene,
        observations.extract_at_turns,
        observations.extract_turns,
        observations.context_max_turns,
        observations.min_window_turns
    from (
        select
            given.*,
            {{ memory_target_key('given.role_id', 'given.script_role_id') }} as target_key
        from (
            select
                {%- for name, kind in fields.items() %}
                unnest(cast(${{ name }} as {{ kind }}[])) as {{ name }}
                {{- ',' if not loop.last }}
                {%- endfor %}
        ) as given
    ) as observations
    left join ( -- noqa: ST05
        select * from memory_loop_state
        where
            list_contains(cast($save_id as bigint[]), save_id)
            and {{ player_filter('user_id', 'save_user_id') }}
    ) as states
        on states.save_id = observations.save_id and states.target_key = observations.target_key
{%- endmacro %}
