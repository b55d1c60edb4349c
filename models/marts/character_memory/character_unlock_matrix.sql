-- One row per (entry, intimacy level, exploration level): is the entry unlocked for a player
-- at those levels? `is_unlocked` knows only the two levels (a condition on any other field
-- fails, as it would with a context lacking it); `is_unlocked_by_levels` judges only the
-- intimacy/exploration conditions, so designers see what the levels alone allow.
with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

condition_values as (
    select * from {{ ref('int_character_condition_values') }}
),

level_conditions as (
    select * from conditions
    where field in ('intimacy', 'exploration')
),

levels as (
    select level_number
    from generate_series(1, {{ var('unlock_matrix_max_level', 5) }}) as levels (level_number)
),

grid as (
    select
        intimacy_levels.level_number as intimacy,
        exploration_levels.level_number as exploration,
        intimacy_levels.level_number * 100 + exploration_levels.level_number as context_id
    from levels as intimacy_levels
    cross join levels as exploration_levels
),

contexts as (
    select context_id from grid
),

context_values as (
    select
        context_id,
        'intimacy' as field,
        cast(intimacy as varchar) as raw_value,
        false as is_list,
        cast(intimacy as varchar) as value_text,
        cast(intimacy as double precision) as value_number
    from grid
    union all
    select
        context_id,
        'exploration' as field,
        cast(exploration as varchar) as raw_value,
        false as is_list,
        cast(exploration as varchar) as value_text,
        cast(exploration as double precision) as value_number
    from grid
),

all_verdicts as (
    {{ evaluate_conditions('conditions', 'condition_values', 'contexts', 'context_values') }}
),

level_verdicts as (
    {{ evaluate_conditions('level_conditions', 'condition_values', 'contexts', 'context_values') }}
),

other_fields as (
    select
        entry_key,
        string_agg(distinct field, ', ' order by field) as other_fields
    from conditions
    where field not in ('intimacy', 'exploration')
    group by entry_key
),

final as (
    select
        entries.entry_key,
        entries.entry_kind,
        entries.character_id,
        entries.group_name,
        entries.content,
        coalesce(other_fields.other_fields, '') as other_fields,
        grid.intimacy,
        grid.exploration,
        coalesce(all_verdicts.is_unlocked, true) as is_unlocked,
        coalesce(level_verdicts.is_unlocked, true) as is_unlocked_by_levels
    from entries
    cross join grid
    left join all_verdicts
        on
            all_verdicts.entry_key = entries.entry_key
            and all_verdicts.context_id = grid.context_id
    left join level_verdicts
        on
            level_verdicts.entry_key = entries.entry_key
            and level_verdicts.context_id = grid.context_id
    left join other_fields
        on other_fields.entry_key = entries.entry_key
)

select * from final
