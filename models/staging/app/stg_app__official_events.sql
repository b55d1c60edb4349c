-- The designers' (official) rows: the same columns as stg_app__memory_events's.
with

source as (
    select * from {{ source('app', 'official_event') }}
),

renamed as (
    {{ staged_memory_rows('memory_event', 'source') }}
)

select * from renamed
