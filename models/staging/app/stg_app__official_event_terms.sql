-- The designers' (official) rows: the same columns as stg_app__memory_event_terms's.
with

source as (
    select * from {{ source('app', 'official_event_term') }}
),

renamed as (
    {{ staged_memory_rows('memory_event_term', 'source') }}
)

select * from renamed
