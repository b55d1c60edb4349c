with

source as (
    select * from {{ source('app', 'memory_extracted_line') }}
),

renamed as (
    select
        line_id,
        target_key,
        user_id,
        batch_key
    from source
)

select * from renamed
