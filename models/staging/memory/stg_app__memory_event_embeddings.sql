with

source as (
    select * from {{ source('app', 'memory_event_embedding') }}
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
