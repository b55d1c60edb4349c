-- The designers' (official) rows: the same columns as stg_app__memory_archive's.
with

source as (
    select * from {{ source('app', 'official_archive') }}
),

renamed as (
    {{ staged_memory_rows('memory_archive', 'source') }}
)

select * from renamed
