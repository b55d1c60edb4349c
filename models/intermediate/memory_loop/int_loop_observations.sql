-- The batch path's observations: every save x character of the memory builder, with the
-- player and scene the loop last saw (so no scene change). MemoryLoop.observe replaces this
-- model with its one observation, every value a bound parameter.
with

targets as (
    select * from {{ ref('int_memory_targets') }}
),

states as (
    select * from {{ ref('stg_app__memory_loop_states') }}
),

settings as (
    select * from {{ ref('memory_loop_settings') }}
),

final as (
    select
        targets.save_id,
        targets.target_key,
        targets.target_role_id,
        targets.target_script_role_id,
        states.user_id,
        states.agent_id,
        states.last_scene as scene,
        states.last_scene,
        settings.extract_at_turns,
        settings.extract_turns,
        settings.context_max_turns,
        settings.min_window_turns
    from targets
    cross join settings
    left join states
        on states.save_id = targets.save_id and states.target_key = targets.target_key
)

select * from final
