-- The designers' (official) rows: the same columns as stg_app__memory_event_embeddings's.
with

source as (
    select * from {{ source('app', 'official_event_embedding') }}
),

renamed as (
    {{ staged_memory_rows('memory_event_embedding', 'source') }}
)

select * from renamed
