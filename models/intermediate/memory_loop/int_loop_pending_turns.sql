-- Per observed save x character: the turns of its current chain that extraction still has to
-- take (a line of theirs not covered: model int_loop_line_coverage), oldest first
-- (pending_index 1), spanning their uncovered lines. The context window and the batches read
-- them. A replay turn holds a line sent before whose memories were cut off the chain: it goes
-- again as a replacement batch. A turn is in the scene its first line (the player's) was
-- played in.
with

coverage as (
    select * from {{ ref('int_loop_line_coverage') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

-- a turn is in the scene its start (the player's line) was played in, covered or not
turn_scenes as (
    select
        save_id,
        turn_number,
        max(case when is_turn_start then scene end) as scene
    from turns
    group by save_id, turn_number
),

turn_spans as (
    select
        coverage.save_id,
        coverage.target_key,
        coverage.turn_number,
        min(coverage.line_position) as first_line_position,
        max(coverage.line_position) as last_line_position,
        {{ arg_min('coverage.line_id', 'coverage.line_position') }} as first_line_id,
        {{ arg_max('coverage.line_id', 'coverage.line_position') }} as last_line_id,
        count(*) as line_count,
        sum(case when coverage.is_extracted then 0 else 1 end) as new_line_count,
        bool_or(coverage.is_replay) as is_replay
    from coverage
    where not coverage.is_covered
    group by coverage.save_id, coverage.target_key, coverage.turn_number
),

final as (
    select
        turn_spans.save_id,
        turn_spans.target_key,
        turn_spans.turn_number,
        row_number() over (
            partition by turn_spans.save_id, turn_spans.target_key
            order by turn_spans.turn_number
        ) as pending_index,
        turn_spans.first_line_id,
        turn_spans.last_line_id,
        turn_spans.first_line_position,
        turn_spans.last_line_position,
        turn_spans.line_count,
        turn_spans.new_line_count,
        turn_scenes.scene,
        turn_spans.is_replay
    from turn_spans
    inner join turn_scenes
        on
            turn_scenes.save_id = turn_spans.save_id
            and turn_scenes.turn_number = turn_spans.turn_number
)

select * from final
