-- One row per unlock condition of a configured entry.
with

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

final as (
    select
        conditions.entry_key,
        entries.entry_kind,
        conditions.character_id,
        conditions.field,
        conditions.operator,
        conditions.condition_value_text as condition_value,
        conditions.condition_index
    from conditions
    inner join entries
        on entries.entry_key = conditions.entry_key
)

select * from final
