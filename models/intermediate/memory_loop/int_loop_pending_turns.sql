-- Per observed save x character: the turns of its current chain after its watermark, oldest
-- first (pending_index 1). These are the context window and what extraction will take. A
-- turn is in the scene its first line (the player's) was played in.
with

watermarks as (
    select * from {{ ref('int_loop_watermarks') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

turn_spans as (
    select
        watermarks.save_id,
        watermarks.target_key,
        turns.turn_number,
        min(turns.line_position) as first_line_position,
        max(turns.line_position) as last_line_position,
        {{ arg_min('turns.line_id', 'turns.line_position') }} as first_line_id,
        {{ arg_max('turns.line_id', 'turns.line_position') }} as last_line_id,
        -- a turn opens at its one turn start
        max(case when turns.is_turn_start then turns.scene end) as scene,
        count(*) as line_count
    from watermarks
    inner join turns
        on
            turns.save_id = watermarks.save_id
            and turns.line_position > watermarks.watermark_position
            and turns.turn_number > 0
    group by watermarks.save_id, watermarks.target_key, turns.turn_number
),

final as (
    select
        save_id,
        target_key,
        turn_number,
        row_number() over (partition by save_id, target_key order by turn_number)
            as pending_index,
        first_line_id,
        last_line_id,
        first_line_position,
        last_line_position,
        line_count,
        scene
    from turn_spans
)

select * from final
