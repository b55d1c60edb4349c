-- Per observed save x character: the turns of its current chain that extraction still has to
-- take (a line of theirs not covered: model int_loop_line_coverage), oldest first
-- (pending_index 1), spanning their uncovered lines. The context window and the batches read
-- them. A replay turn holds a line sent before whose memories were cut off the chain: it goes
-- again as a replacement batch. A turn is in the scene its start (the player's line) was
-- played in, covered or not.
with

coverage as (
    select * from {{ ref('int_loop_line_coverage') }}
),

turn_spans as (
    select
        save_id,
        target_key,
        turn_number,
        min(case when not is_covered then line_position end) as first_line_position,
        max(case when not is_covered then line_position end) as last_line_position,
        {{ arg_min(
            'case when not is_covered then line_id end',
            'case when not is_covered then line_position end'
        ) }} as first_line_id,
        {{ arg_max(
            'case when not is_covered then line_id end',
            'case when not is_covered then line_position end'
        ) }} as last_line_id,
        sum(case when is_covered then 0 else 1 end) as line_count,
        sum(case when is_extracted then 0 else 1 end) as new_line_count,
        bool_or(is_replay) as is_replay,
        max(case when is_turn_start then scene end) as scene
    from coverage
    group by save_id, target_key, turn_number
    having bool_or(not is_covered)
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
        new_line_count,
        scene,
        is_replay
    from turn_spans
)

select * from final
