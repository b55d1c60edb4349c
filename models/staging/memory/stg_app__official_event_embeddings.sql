-- The designers' (official) rows, the same columns as stg_app__memory_event_embeddings's.
with

source as (
    select * from {{ source('app', 'official_event_embedding') }}
),

renamed as (
    select
        event_id,
        embedding,
        context_embedding,
        long_context_embedding
    from source
)

select * from renamed
