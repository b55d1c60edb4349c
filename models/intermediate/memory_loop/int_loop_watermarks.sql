-- Per observed save x character: the deepest line of its current chain that extraction covers
-- for that character (model int_loop_line_coverage: sent, and not left without its memory by a
-- cut). A line is extracted once per character, whichever save it was played on: a fork
-- shares its parent's lines up to the fork point, and a reload returns to lines extracted on
-- another branch, so both find those lines covered and send only their own. The context
-- window starts after it.
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
        max(line_position) as watermark_position,
        {{ arg_max('line_id', 'line_position') }} as watermark_line_id
    from coverage
    where is_covered
    group by save_id, target_key
),

final as (
    select
        observations.save_id,
        observations.target_key,
        covered.watermark_line_id,
        coalesce(covered.watermark_position, -1) as watermark_position
    from observations
    left join covered
        on
            covered.save_id = observations.save_id
            and covered.target_key = observations.target_key
)

select * from final
