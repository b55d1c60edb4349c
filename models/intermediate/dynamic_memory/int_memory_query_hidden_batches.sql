-- The replacement batches each query's chain hides (the branch rule reads them): a line they
-- replace (the last line of a memory they stand in for) is on the chain, so the original shows
-- there and the replacement does not. None for a query without a save.
with

query_chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

batch_lines as (
    select * from {{ ref('stg_app__memory_batch_lines') }}
),

final as (
    select distinct
        query_chains.query_id,
        batch_lines.batch_key
    from batch_lines
    inner join query_chains
        on query_chains.line_id = batch_lines.line_id
    where batch_lines.relation = 'replaces'
)

select * from final
