with

history as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

saves as (
    select * from {{ ref('stg_app__saves') }}
),

speakers as (
    select distinct
        save_id,
        role_id,
        {{ blank_as_null('script_role_id') }} as script_role_id
    from history
    where attribute in ('assistant', 'system')
),

role_targets as (
    select distinct
        save_id,
        {{ memory_target_key('role_id', 'cast(null as varchar)') }} as target_key,
        role_id as target_role_id,
        cast(null as varchar) as target_script_role_id
    from speakers
    where role_id is not null
),

script_role_targets as (
    select distinct
        save_id,
        {{ memory_target_key('cast(null as bigint)', 'script_role_id') }} as target_key,
        cast(null as bigint) as target_role_id,
        script_role_id as target_script_role_id
    from speakers
    where script_role_id is not null
),

final as (
    select
        targets.save_id,
        targets.target_key,
        targets.target_role_id,
        targets.target_script_role_id,
        -- the batch path never targets by display name (no name is derived from an id)
        cast(null as varchar) as target_display_name,
        -- stored histories name the player by the save's name: no request is being answered
        -- (a request naming another is rendered from the chain, not read from the table)
        cast(null as varchar) as request_user_name,
        saves.user_name as save_user_name,
        {{ var('context_emotion', true) }} as use_context_emotion,
        cast(null as bigint) as resume_line_position,
        cast(null as bigint) as resume_message_index
    from (
        select * from role_targets
        union all
        select * from script_role_targets
    ) as targets
    left join saves
        on saves.save_id = targets.save_id
)

select * from final
