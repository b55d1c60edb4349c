with

source as (
    select * from {{ source('config', 'character_events') }}
),

renamed as (
    select
        ordinal as entry_ordinal,
        character_id,
        event_type as group_name,
        event_date,
        keywords,
        content,
        strength,
        query_params
    from source
)

select * from renamed
