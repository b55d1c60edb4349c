with

source as (
    select * from {{ source('app', 'memory_archive') }}
),

renamed as (
    {{ staged_memory_rows('memory_archive', 'source') }}
)

select * from renamed
