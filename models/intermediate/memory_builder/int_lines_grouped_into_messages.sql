with

classified as (
    select * from {{ ref('int_lines_classified_for_target') }}
),

-- another character's system prompt is not part of this character's memory at all, nor is
-- a line it did not witness (absent from the scene)
kept as (
    select
        *,
        case line_kind
            when 'system' then 'system'
            when 'self' then 'self'
            else 'others'
        end as speaker_side
    from classified
    where line_kind <> 'other_system' and is_witnessed
),

-- LAG marks where the speaking side changes. A message is keyed by the line just before it: a
-- run of own lines by the last other/system line before it, a run of other voices by the last
-- own/system line before it (+ 0.5, so no run shares a key with a system line, which keys
-- itself). A player line is focus when no other speaker follows it inside its segment: the next
-- other speaker, if any, comes after the next own/system line. Every frame starts at the
-- partition's start (the "next" ones in reverse order): PostgreSQL then aggregates each window
-- in one pass, where a frame that ends at the partition's end is recomputed row by row.
sided as (
    select
        *,
        line_kind = 'system'
        or coalesce(lag(speaker_side) over by_position <> speaker_side, true) as is_message_start,
        max(case when speaker_side <> 'others' then line_position end)
            over preceding_lines as previous_own_or_system_position,
        max(case when speaker_side <> 'self' then line_position end)
            over preceding_lines as previous_other_or_system_position,
        min(case when line_kind = 'other_speaker' then line_position end)
            over following_lines as next_other_speaker_position,
        min(case when speaker_side <> 'others' then line_position end)
            over following_lines as next_own_or_system_position
    from kept
    window
        by_position as (partition by save_id, target_key order by line_position),
        preceding_lines as (
            by_position rows between unbounded preceding and 1 preceding
        ),
        following_lines as (
            partition by save_id, target_key
            order by line_position desc
            rows between unbounded preceding and 1 preceding
        )
),

keyed as (
    select
        *,
        case speaker_side
            when 'system' then cast(line_position as double precision)
            when 'self' then coalesce(previous_other_or_system_position, -1) + 0.5
            else coalesce(previous_own_or_system_position, -1) + 0.5
        end as message_key,
        line_kind in ('system', 'self')
        or (
            line_kind = 'user'
            and (
                next_other_speaker_position is null
                or coalesce(next_own_or_system_position < next_other_speaker_position, false)
            )
        ) as is_focus
    from sided
),

final as (
    select
        save_id,
        target_key,
        message_key,
        line_position,
        line_id,
        line_kind,
        speaker_side,
        case
            when line_kind = 'self'
                then
                    coalesce('【' || emotion || '】', '')
                    || content
                    || coalesce('<' || tts_content || '>', '')
                    || coalesce('（' || action_content || '）', '')
            when is_focus then content
            -- the player: the line's own name, else the request's, else the save's
            when line_kind = 'user'
                then
                    coalesce(display_name, request_user_name, save_user_name, '用户')
                    || '：' || content
            -- another voice: its shown name, else its role's, else the narrator
            else
                coalesce(display_name, role_name, '旁白') || '：'
                || case
                    when use_context_emotion then coalesce('【' || emotion || '】', '') else ''
                end
                || content
                || coalesce('（' || action_content || '）', '')
        end as line_text,
        is_message_start,
        is_focus
    from keyed
)

select * from final
