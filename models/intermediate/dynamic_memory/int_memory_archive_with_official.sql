-- The players' archived memories and the designers' official ones, as macro union_official
-- appends them (the one place official rows join the players'): every reader of both reads
-- this model.
with

players as (
    select * from {{ ref('stg_app__memory_archive') }}
),

official as (
    select * from {{ ref('stg_app__official_archive') }}
),

final as (
    {{ union_official('players', 'official') }}
)

select * from final
