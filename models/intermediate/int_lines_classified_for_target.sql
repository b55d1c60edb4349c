with

history as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

targets as (
    select * from {{ ref('int_memory_targets') }}
),

cleaned as (
    select
        history.save_id,
        targets.target_key,
        history.line_id,
        history.line_position,
        history.attribute,
        history.role_id,
        {{ blank_as_null('history.script_role_id') }} as script_role_id,
        {{ blank_as_null('history.display_name') }} as display_name,
        coalesce(history.content, '') as content,
        {{ blank_as_null('history.original_emotion') }} as emotion,
        {{ blank_as_null('history.tts_content') }} as tts_content,
        {{ blank_as_null('history.action_content') }} as action_content,
        targets.target_role_id,
        {{ blank_as_null('targets.target_script_role_id') }} as target_script_role_id,
        {{ blank_as_null('targets.target_display_name') }} as target_display_name,
        targets.use_context_emotion
    from history
    inner join targets
        on targets.save_id = history.save_id
),

identified as (
    select
        *,
        -- a field the caller did not give is null and never matches
        coalesce(role_id = target_role_id, false)
        or coalesce(script_role_id = target_script_role_id, false)
        or coalesce(display_name = target_display_name, false) as is_self,
        role_id is null
        and script_role_id is null
        and display_name is null as has_no_identity
    from cleaned
),

final as (
    select
        *,
        case
            when attribute = 'system' and (has_no_identity or is_self) then 'system'
            when attribute = 'system' then 'other_system'
            when attribute = 'assistant' and is_self then 'self'
            when attribute = 'assistant' then 'other_speaker'
            when attribute = 'user' then 'user'
            else {{ rolemem_raise(
                "'line ' || coalesce(cast(line_id as varchar), 'at position '
                || cast(line_position as varchar)) || ' has unknown attribute '
                || coalesce('''' || attribute || '''', 'null')
                || ' (expected system, user or assistant)'"
            ) }}
        end as line_kind
    from identified
)

select * from final
