with

source as (
    select * from {{ source('config', 'character_dialogue_styles') }}
),

renamed as (
    select
        ordinal as entry_ordinal,
        character_id,
        style_type as group_name,
        cast(null as varchar) as event_date,
        keywords,
        content,
        strength,
        query_params
    from source
)

select * from renamed
