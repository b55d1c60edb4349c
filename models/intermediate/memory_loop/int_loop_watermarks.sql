-- Per observed save x character: the deepest line of its current chain that extraction covers
-- for that character (model int_loop_line_coverage: sent, and not left without its memory by a
-- cut). A line is extracted once per character, whichever save it was played on: a fork
-- shares its parent's lines up to the fork point, and a reload returns to lines extracted on
-- another branch, so both find those lines covered and send only their own. The context
-- window starts after it. has_cut: a line of the chain was sent by a batch whose last line is
-- off it, so a memory may have been cut off the chain (var loop_cuts plans for it).
-- has_presence: a line of the chain says who was present, so a character may not have
-- witnessed every line (var loop_presence plans for it).
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

coverage as (
    select * from {{ ref('int_loop_line_coverage') }}
),

covered as (
    select
        save_id,
        target_key,
        max(case when is_covered then line_position end) as watermark_position,
        {{ arg_max(
            'case when is_covered then line_id end',
            'case when is_covered then line_position end'
        ) }} as watermark_line_id,
        -- a batch that sent a line here ends on a line that no row here has (off the chain:
        -- a batch sends its last line too; a batch end on the chain without a row here only
        -- plans the cut variant, never misses one); a join of the chain with itself cost a
        -- millisecond
        not {{ group_covers('line_id', 'is_extracted', 'batch_last_line_id') }} as has_cut,
        bool_or(says_presence) as has_presence
    from coverage
    group by save_id, target_key
),

final as (
    select
        observations.save_id,
        observations.target_key,
        covered.watermark_line_id,
        coalesce(covered.watermark_position, -1) as watermark_position,
        coalesce(covered.has_cut, false) as has_cut,
        coalesce(covered.has_presence, false) as has_presence
    from observations
    left join covered
        on
            covered.save_id = observations.save_id
            and covered.target_key = observations.target_key
)

select * from final
