-- Per observed save x character: where the reply's context window starts on the current
-- chain. It holds the turns after the extraction watermark, the deepest covered line (the
-- opening lines before the first player line too while nothing is extracted), at most
-- context_max_turns of them, and never
-- fewer than the newest min_window_turns turns of the chain, extracted or not: right after an
-- extraction or a scene change the character still sees the conversation.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

watermarks as (
    select * from {{ ref('int_loop_watermarks') }}
),

pending as (
    select * from {{ ref('int_loop_pending_turns') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

turn_starts as (
    select
        save_id,
        turn_number,
        min(line_position) as first_line_position,
        max(turn_number) over (partition by save_id) as turn_count
    from turns
    where turn_number > 0
    group by save_id, turn_number
),

{% if var('loop_cuts', true) %}
    -- the pending turns after the watermark (a replay turn before it is old conversation, not
    -- the window's), numbered again from the oldest
    window_pending as (
        select
            pending.save_id,
            pending.target_key,
            pending.first_line_position,
            row_number() over (
                partition by pending.save_id, pending.target_key order by pending.turn_number
            ) as window_index
        from pending
        inner join watermarks
            on
                watermarks.save_id = pending.save_id
                and watermarks.target_key = pending.target_key
        where pending.first_line_position > watermarks.watermark_position
    ),

    pending_counts as (
        select
            pending.save_id,
            pending.target_key,
            count(*) as pending_turns,
            count(window_pending.window_index) as window_pending_turns,
            min(pending.first_line_position) as first_pending_position
        from pending
        left join window_pending
            on
                window_pending.save_id = pending.save_id
                and window_pending.target_key = pending.target_key
                and window_pending.first_line_position = pending.first_line_position
        group by pending.save_id, pending.target_key
    ),
{% else %}
    -- no memory was cut off the chain (var loop_cuts false): every pending turn is after the
    -- watermark
    window_pending as (
        select
            save_id,
            target_key,
            first_line_position,
            pending_index as window_index
        from pending
    ),

    pending_counts as (
        select
            save_id,
            target_key,
            count(*) as pending_turns,
            count(*) as window_pending_turns,
            min(first_line_position) as first_pending_position
        from pending
        group by save_id, target_key
    ),
{% endif %}

pending_starts as (
    -- the first line of the newest context_max_turns pending turns after the watermark
    select
        window_pending.save_id,
        window_pending.target_key,
        min(window_pending.first_line_position) as first_line_position
    from window_pending
    inner join pending_counts
        on
            pending_counts.save_id = window_pending.save_id
            and pending_counts.target_key = window_pending.target_key
    inner join observations
        on
            observations.save_id = window_pending.save_id
            and observations.target_key = window_pending.target_key
    where
        window_pending.window_index
        > pending_counts.window_pending_turns - observations.context_max_turns
    group by window_pending.save_id, window_pending.target_key
),

minimum_starts as (
    -- the first line of the newest min_window_turns turns (line 0 when the chain has no more)
    select
        observations.save_id,
        observations.target_key,
        case
            when coalesce(max(turn_starts.turn_count), 0) <= observations.min_window_turns
                then 0
            else min(turn_starts.first_line_position)
        end as first_line_position
    from observations
    left join turn_starts
        on
            turn_starts.save_id = observations.save_id
            and turn_starts.turn_number > turn_starts.turn_count - observations.min_window_turns
    group by observations.save_id, observations.target_key, observations.min_window_turns
),

starts as (
    select
        observations.save_id,
        observations.target_key,
        coalesce(pending_counts.pending_turns, 0) as pending_turns,
        pending_counts.first_pending_position,
        least(
            case
                when
                    coalesce(pending_counts.window_pending_turns, 0)
                    <= observations.context_max_turns
                    then watermarks.watermark_position + 1
                else pending_starts.first_line_position
            end,
            minimum_starts.first_line_position
        ) as window_start_position
    from observations
    inner join watermarks
        on
            watermarks.save_id = observations.save_id
            and watermarks.target_key = observations.target_key
    inner join minimum_starts
        on
            minimum_starts.save_id = observations.save_id
            and minimum_starts.target_key = observations.target_key
    left join pending_counts
        on
            pending_counts.save_id = observations.save_id
            and pending_counts.target_key = observations.target_key
    left join pending_starts
        on
            pending_starts.save_id = observations.save_id
            and pending_starts.target_key = observations.target_key
),

final as (
    select
        starts.save_id,
        starts.target_key,
        starts.window_start_position,
        starts.pending_turns,
        starts.first_pending_position,
        count(turn_starts.turn_number) as window_turns
    from starts
    left join turn_starts
        on
            turn_starts.save_id = starts.save_id
            and turn_starts.first_line_position >= starts.window_start_position
    group by
        starts.save_id,
        starts.target_key,
        starts.window_start_position,
        starts.pending_turns,
        starts.first_pending_position
)

select * from final
