-- The players' event memories and the designers' official ones (tables of their own: on
-- Citus reference tables, read on every player's shard): every reader of both reads this
-- union, the one place official rows join the players'. The two staging models have the same
-- columns in the same order.
with

players as (
    select * from {{ ref('stg_app__memory_events') }}
),

official as (
    select * from {{ ref('stg_app__official_events') }}
),

final as (
    select * from players
    union all
    select * from official
)

select * from final
