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
        -- as written: blank counts as no name where it names a line (the memory builder), and
        -- the history's freshness check compares it as stored
        user_name
    from source
)

select * from renamed
