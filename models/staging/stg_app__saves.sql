with

source as (
    select * from {{ source('app', 'save') }}
),

renamed as (
    select
        id as save_id,
        last_message_id
    from source
)

select * from renamed
