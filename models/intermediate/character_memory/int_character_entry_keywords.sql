-- One row per (entry, keyword), with the keyword case-folded as recall compares it (built once
-- per config, so a turn never folds the config).
with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

keywords as (
    select distinct
        entry_key,
        character_id,
        unnest({{ json_text_list('keywords') }}) as keyword
    from entries
    where {{ json_type_name('keywords') }} = 'ARRAY'
),

final as (
    select
        entry_key,
        character_id,
        keyword,
        lower(keyword) as folded_keyword,
        length(keyword) as keyword_length
    from keywords
    where keyword <> ''
)

select * from final
