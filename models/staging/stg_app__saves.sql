with

source as (
    select * from {{ source('app', 'save') }}
),

renamed as (
    select
        id as save_id,
        user_id,
        last_message_id,
        forked_from_line_id,
        {{ blank_as_null('user_name') }} as user_name
    from source
)

select * from renamed
