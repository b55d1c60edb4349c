-- One row per configured entry, with its conditions in readable form (for designers).
with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

condition_summaries as (
    select
        entry_key,
        count(*) as condition_count,
        string_agg(
            field || ' ' || operator || ' ' || condition_value_text, '; '
            order by condition_index
        ) as conditions_text
    from conditions
    group by entry_key
),

final as (
    select
        entries.entry_key,
        entries.entry_kind,
        entries.character_id,
        entries.group_name,
        entries.event_date,
        entries.content,
        {{ json_text_list('entries.keywords') }} as keywords,
        coalesce(condition_summaries.conditions_text, '') as conditions_text,
        entries.group_order,
        entries.entry_ordinal,
        entries.strength,
        coalesce(condition_summaries.condition_count, 0) as condition_count
    from entries
    left join condition_summaries
        on condition_summaries.entry_key = entries.entry_key
)

select * from final
