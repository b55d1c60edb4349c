with

source as (
    select * from {{ source('app', 'memory_batch_line') }}
),

renamed as (
    select
        batch_key,
        line_id,
        relation,
        user_id,
        target_key,
        last_line_id
    from source
)

select * from renamed
