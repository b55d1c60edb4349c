-- The players' entity memories and the designers' official ones, as macro union_official
-- appends them (the one place official rows join the players'): every reader of both reads
-- this model.
with

players as (
    select * from {{ ref('stg_app__memory_entities') }}
),

official as (
    select * from {{ ref('stg_app__official_entities') }}
),

final as (
    {{ union_official('players', 'official') }}
)

select * from final
