-- The designers' (official) rows: the same columns as stg_app__memory_entities's.
with

source as (
    select * from {{ source('app', 'official_entity') }}
),

renamed as (
    {{ staged_memory_rows('memory_entity', 'source') }}
)

select * from renamed
