with

attributes as (
    select * from {{ ref('stg_config__character_attributes') }}
),

events as (
    select * from {{ ref('stg_config__character_events') }}
),

dialogue_styles as (
    select * from {{ ref('stg_config__character_dialogue_styles') }}
),

unioned as (
    select 'attribute' as entry_kind, * from attributes
    union all
    select 'event' as entry_kind, * from events
    union all
    select 'dialogue_style' as entry_kind, * from dialogue_styles
),

final as (
    select
        entry_kind || ':' || entry_ordinal as entry_key,
        entry_kind,
        character_id,
        group_name,
        -- a group is listed where the designer first used it
        min(entry_ordinal) over (
            partition by character_id, entry_kind, group_name
        ) as group_order,
        entry_ordinal,
        event_date,
        content,
        keywords,
        query_params,
        strength
    from unioned
)

select * from final
