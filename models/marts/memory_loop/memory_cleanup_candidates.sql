-- What a maintenance run now would archive (as of the build's clock), with the rule and rank.
with

candidates as (
    select * from {{ ref('int_memory_cleanup_candidates') }}
),

final as (
    select * from candidates
)

select * from final
