-- The replacement batches each query's chain hides (the branch rule reads them): those its
-- save's chain hides (model int_loop_hidden_batches, the rule once). None for a query without
-- a save.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

hidden_batches as (
    select * from {{ ref('int_loop_hidden_batches') }}
),

final as (
    select
        queries.query_id,
        hidden_batches.batch_key
    from queries
    inner join hidden_batches
        on hidden_batches.save_id = queries.save_id
)

select * from final
