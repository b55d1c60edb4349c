-- Per observed save: the replacement batches whose originals show on its current chain (a
-- line they replace, the last line of a memory they stand in for, is on it). Their memories
-- are hidden there, so going back to where a cut memory shows again brings no duplicate.
with

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

batch_lines as (
    select * from {{ ref('stg_app__memory_batch_lines') }}
),

final as (
    select distinct
        turns.save_id,
        batch_lines.batch_key
    from batch_lines
    inner join turns
        on turns.line_id = batch_lines.line_id
    where batch_lines.relation = 'replaces'
)

select * from final
