with

source as (
    select * from {{ source('app', 'memory_event_line') }}
),

renamed as (
    select
        event_id,
        line_id,
        user_id,
        target_key,
        batch_key,
        last_line_id
    from source
)

select * from renamed
