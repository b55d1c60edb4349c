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
        message_key,
        max(speaker_side) as speaker_side,
        string_agg(line_text, chr(10) order by line_position)
        filter (where not is_focus) as background_text,
        string_agg(line_text, '' order by line_position)
        filter (where is_focus) as focus_text,
        min(line_position) as first_line_position,
        max(line_position) as last_line_position,
        count(*) as line_count
    from grouped_lines
    group by save_id, target_key, message_key
),

-- numbered after aggregation: one row per message is far fewer rows to sort than per line
indexed as (
    select
        *,
        row_number() over (partition by save_id, target_key order by message_key) - 1
            as message_index
    from messages
),

final as (
    select
        indexed.save_id,
        indexed.target_key,
        targets.target_role_id,
        targets.target_script_role_id,
        coalesce(targets.resume_message_index, 0) + indexed.message_index as message_index,
        case indexed.speaker_side
            when 'system' then 'system'
            when 'self' then 'assistant'
            else 'user'
        end as role,
        case
            when indexed.background_text is null then indexed.focus_text
            when indexed.focus_text is null then '{' || indexed.background_text || '}'
            else '{' || indexed.background_text || '}' || chr(10) || indexed.focus_text
        end as content,
        indexed.first_line_position,
        indexed.last_line_position,
        indexed.line_count
    from indexed
    inner join targets
        on
            targets.save_id = indexed.save_id
            and targets.target_key = indexed.target_key
)

select * from final
