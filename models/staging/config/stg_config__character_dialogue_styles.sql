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
        query_params,
        secondary_keywords,
        upper(secondary_logic) as secondary_logic,
        is_constant,
        sticky_turns
    from source
)

select * from renamed
