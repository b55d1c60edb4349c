with

source as (
    select * from {{ source('app', 'memory_entity') }}
),

renamed as (
    {{ staged_memory_rows('memory_entity', 'source') }}
)

select * from renamed
