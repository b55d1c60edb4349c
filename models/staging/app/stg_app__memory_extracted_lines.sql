with

source as (
    select * from {{ source('app', 'memory_extracted_line') }}
),

renamed as (
    select
        line_id,
        target_key,
        user_id,
        batch_key,
        batch_last_line_id
    from source
)

select * from renamed
