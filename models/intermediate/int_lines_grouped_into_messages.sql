with

classified as (
    select * from {{ ref('int_lines_classified_for_target') }}
),

-- another character's system prompt is not part of this character's memory at all
kept as (
    select
        *,
        case line_kind
            when 'system' then 'system'
            when 'self' then 'self'
            else 'others'
        end as speaker_side
    from classified
    where line_kind <> 'other_system'
),

-- a message starts at every system line and wherever the speaking side changes
started as (
    select
        *,
        line_kind = 'system'
        or coalesce(lag(speaker_side) over by_position <> speaker_side, true) as is_message_start
    from kept
    window by_position as (partition by save_id, target_key order by line_position)
),

numbered as (
    select
        *,
        sum(case when is_message_start then 1 else 0 end) over (
            partition by save_id, target_key
            order by line_position
            rows between unbounded preceding and current row
        ) - 1 as message_index
    from started
),

-- in a segment of other voices, the player's lines after the last other speaker are the focus
with_last_other_speaker as (
    select
        *,
        max(case when line_kind = 'other_speaker' then line_position end) over (
            partition by save_id, target_key, message_index
        ) as last_other_speaker_position
    from numbered
),

focused as (
    select
        *,
        line_kind in ('system', 'self')
        or (
            line_kind = 'user'
            and (
                last_other_speaker_position is null
                or line_position > last_other_speaker_position
            )
        ) as is_focus
    from with_last_other_speaker
),

final as (
    select
        save_id,
        target_key,
        message_index,
        line_position,
        line_id,
        line_kind,
        speaker_side,
        case
            when line_kind = 'self' then
                coalesce('【' || emotion || '】', '')
                || content
                || coalesce('<' || tts_content || '>', '')
                || coalesce('（' || action_content || '）', '')
            when is_focus then content
            when line_kind = 'user' then coalesce(display_name, '用户') || '：' || content
            else
                coalesce(display_name, '旁白') || '：'
                || case when use_context_emotion then coalesce('【' || emotion || '】', '') else '' end
                || content
                || coalesce('（' || action_content || '）', '')
        end as line_text,
        is_message_start,
        is_focus
    from focused
)

select * from final
