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

-- distinct non-empty secondary keywords per entry (what AND_ALL and NOT_ALL count against)
secondary_counts as (
    select
        entry_kind,
        entry_ordinal,
        count(distinct keyword) as secondary_keyword_count
    from (
        select
            entry_kind,
            entry_ordinal,
            unnest({{ json_text_list('secondary_keywords') }}) as keyword
        from unioned
        where {{ json_type_name('secondary_keywords') }} = 'ARRAY'
    ) as secondary
    where keyword <> ''
    group by entry_kind, entry_ordinal
),

final as (
    select
        unioned.entry_kind || ':' || unioned.entry_ordinal as entry_key,
        unioned.entry_kind,
        unioned.character_id,
        unioned.group_name,
        -- a group is listed where the designer first used it
        min(unioned.entry_ordinal) over (
            partition by unioned.character_id, unioned.entry_kind, unioned.group_name
        ) as group_order,
        unioned.entry_ordinal,
        unioned.event_date,
        unioned.content,
        unioned.keywords,
        unioned.query_params,
        unioned.strength,
        unioned.secondary_keywords,
        -- no logic given: SillyTavern's default, any secondary keyword
        coalesce(unioned.secondary_logic, 'AND_ANY') as secondary_logic,
        coalesce(secondary_counts.secondary_keyword_count, 0) as secondary_keyword_count,
        unioned.is_constant,
        unioned.sticky_turns
    from unioned
    left join secondary_counts
        on
            secondary_counts.entry_kind = unioned.entry_kind
            and secondary_counts.entry_ordinal = unioned.entry_ordinal
)

select * from final
