{#- var history_presence false: no line of the chains says who was present (a caller that
    read them: build.py), so every character witnessed every line and none of the presence
    rule is planned (a turn plans every operator on every call) #}
{%- set presence = var('history_presence', true) %}
with

history as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

targets as (
    select * from {{ ref('int_memory_targets') }}
),

{%- if presence %}

    witnesses as (
        select * from {{ ref('int_role_witnesses') }}
    ),
{%- endif %}

-- cleaned before the join so each line is cleaned once, not once per target
cleaned_history as (
    select
        save_id,
        line_id,
        line_position,
        attribute,
        role_id,
        {{ blank_as_null('script_role_id') }} as script_role_id,
        {{ blank_as_null('display_name') }} as display_name,
        role_name,
        coalesce(content, '') as content,
        {{ blank_as_null('original_emotion') }} as emotion,
        {{ blank_as_null('tts_content') }} as tts_content,
        {{ blank_as_null('action_content') }} as action_content,
        present_role_ids,
        present_script_role_ids
    from history
),

cleaned as (
    select
        cleaned_history.save_id,
        targets.target_key,
        cleaned_history.line_id,
        cleaned_history.line_position,
        cleaned_history.attribute,
        cleaned_history.role_id,
        cleaned_history.script_role_id,
        cleaned_history.display_name,
        cleaned_history.role_name,
        cleaned_history.content,
        cleaned_history.emotion,
        cleaned_history.tts_content,
        cleaned_history.action_content,
        targets.target_role_id,
        {{ blank_as_null('targets.target_script_role_id') }} as target_script_role_id,
        {{ blank_as_null('targets.target_display_name') }} as target_display_name,
        {{ blank_as_null('targets.request_user_name') }} as request_user_name,
        {{ blank_as_null('targets.save_user_name') }} as save_user_name,
        targets.use_context_emotion,
        {%- if presence %}
            {{ is_witnessed('cleaned_history', 'targets', 'witnesses') }} as is_witnessed
        {%- else %}
            true as is_witnessed
        {%- endif %}
    from cleaned_history
    inner join targets
        on
            targets.save_id = cleaned_history.save_id
            -- write-time upkeep rebuilds a target's messages from its last one on
            and cleaned_history.line_position >= coalesce(targets.resume_line_position, 0)
    {%- if presence %}
        -- read by macro is_witnessed, in an if of its own
        left join witnesses -- noqa: ST11
            on witnesses.role_id = targets.target_role_id
    {%- endif %}
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
