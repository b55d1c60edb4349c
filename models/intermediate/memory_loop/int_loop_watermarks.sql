-- Per observed save x character: the deepest line of its current chain that an extraction
-- batch already covered. Derived from the batches on the chain, so a branch the player left
-- keeps its batches, and returning to it finds its watermark again: nothing is extracted twice.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

batches as (
    select * from {{ ref('stg_app__memory_extraction_batches') }}
),

covered as (
    select
        observations.save_id,
        observations.target_key,
        max(turns.line_position) as watermark_position,
        {{ arg_max('turns.line_id', 'turns.line_position') }} as watermark_line_id
    from observations
    inner join batches
        on
            batches.save_id = observations.save_id
            and batches.target_key = observations.target_key
    inner join turns
        on turns.save_id = batches.save_id and turns.line_id = batches.last_line_id
    group by observations.save_id, observations.target_key
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
