with

source as (
    select * from {{ source('app', 'memory_event') }}
),

renamed as (
    {{ staged_memory_rows('memory_event', 'source') }}
)

select * from renamed
