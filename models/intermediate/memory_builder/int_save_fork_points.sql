-- Every fork: a save started at a line of another save, whose lines up to that line it shares.
-- The walk reads every save's fork point, not only the walked saves': a fork of a fork passes
-- through the fork point of the save it was forked from.
with

saves as (
    select * from {{ ref('stg_app__saves') }}
),

final as (
    select
        save_id,
        forked_from_line_id
    from saves
    where forked_from_line_id is not null
)

select * from final
