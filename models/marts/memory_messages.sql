with

grouped_lines as (
    select * from {{ ref('int_lines_grouped_into_messages') }}
),

targets as (
    select * from {{ ref('int_memory_targets') }}
),

messages as (
    select
        save_id,
        target_key,
        message_index,
        max(speaker_side) as speaker_side,
        string_agg(line_text, chr(10) order by line_position)
            filter (where not is_focus) as background_text,
        string_agg(line_text, '' order by line_position)
            filter (where is_focus) as focus_text,
        min(line_position) as first_line_position,
        max(line_position) as last_line_position,
        count(*) as line_count
    from grouped_lines
    group by save_id, target_key, message_index
),

final as (
    select
        messages.save_id,
        messages.target_key,
        targets.target_role_id,
        targets.target_script_role_id,
        messages.message_index,
        case messages.speaker_side
            when 'system' then 'system'
            when 'self' then 'assistant'
            else 'user'
        end as role,
        case
            when messages.background_text is null then messages.focus_text
            when messages.focus_text is null then '{' || messages.background_text || '}'
            else '{' || messages.background_text || '}' || chr(10) || messages.focus_text
        end as content,
        messages.first_line_position,
        messages.last_line_position,
        messages.line_count
    from messages
    inner join targets
        on
            targets.save_id = messages.save_id
            and targets.target_key = messages.target_key
)

select * from final
