-- Per observed save x character: the deepest line of its current chain already sent to the LLM
-- for that character. A line is extracted once per character, whichever save it was played
-- on: a fork shares its parent's lines up to the fork point, and a reload returns to lines
-- extracted on another branch, so both find those lines covered and send only their own.
-- (Batches written before lines were recorded had theirs recorded once per store: macro
-- backfill_extracted_lines.)
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

extracted_lines as (
    select * from {{ ref('stg_app__memory_extracted_lines') }}
),

covered_lines as (
    select
        observations.save_id,
        observations.target_key,
        turns.line_id,
        turns.line_position
    from observations
    inner join turns
        on turns.save_id = observations.save_id
    inner join extracted_lines
        on
            extracted_lines.line_id = turns.line_id
            and extracted_lines.target_key = observations.target_key
),

covered as (
    select
        save_id,
        target_key,
        max(line_position) as watermark_position,
        {{ arg_max('line_id', 'line_position') }} as watermark_line_id
    from covered_lines
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
