with

source as (
    select * from {{ source('app', 'memory_event_term') }}
),

renamed as (
    {{ staged_memory_rows('memory_event_term', 'source') }}
)

select * from renamed
