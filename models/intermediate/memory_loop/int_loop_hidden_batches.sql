-- Per save of the current chains: the replacement batches whose originals show on its chain
-- (a line they replace, the last line of a memory they stand in for, is on it). Their memories
-- are hidden there, so going back to where a cut memory shows again brings no duplicate.
with

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

batch_lines as (
    select * from {{ ref('stg_app__memory_batch_lines') }}
),

final as (
    select distinct
        chains.save_id,
        batch_lines.batch_key
    from batch_lines
    inner join chains
        on chains.line_id = batch_lines.line_id
    where batch_lines.relation = 'replaces'
)

select * from final
