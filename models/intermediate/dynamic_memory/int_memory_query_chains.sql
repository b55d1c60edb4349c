-- The lines of each query's save on its current chain (the branch rule reads them): none for a
-- query without a save.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

final as (
    select
        queries.query_id,
        chains.line_id,
        chains.line_position
    from queries
    inner join chains
        on chains.save_id = queries.save_id
)

select * from final
