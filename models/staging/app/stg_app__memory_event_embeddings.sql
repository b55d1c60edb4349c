with

source as (
    select * from {{ source('app', 'memory_event_embedding') }}
),

renamed as (
    {{ staged_memory_rows('memory_event_embedding', 'source') }}
)

select * from renamed
