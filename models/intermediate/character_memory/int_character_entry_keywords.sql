-- One row per (entry, keyword), with the keyword case-folded as recall compares it (built once
-- per config, so a turn never folds the config). Secondary keywords (the entry's selective
-- logic) are rows too, marked: they decide whether a match counts, never make one.
with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

keywords as (
    select distinct
        entry_key,
        character_id,
        false as is_secondary,
        unnest({{ json_text_list('keywords') }}) as keyword
    from entries
    where {{ json_type_name('keywords') }} = 'ARRAY'
    union
    select distinct
        entry_key,
        character_id,
        true as is_secondary,
        unnest({{ json_text_list('secondary_keywords') }}) as keyword
    from entries
    where {{ json_type_name('secondary_keywords') }} = 'ARRAY'
),

final as (
    select
        entry_key,
        character_id,
        keyword,
        lower(keyword) as folded_keyword,
        length(keyword) as keyword_length,
        is_secondary
    from keywords
    where keyword <> ''
)

select * from final
