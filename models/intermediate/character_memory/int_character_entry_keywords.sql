-- One row per (entry, keyword), with the keyword case-folded as recall compares it (built once
-- per config, so a turn never folds the config). Secondary keywords (the entry's selective
-- logic) are rows too, marked: they decide whether a match counts, never make one.
with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

keywords as (
    {% for column, is_secondary in [('keywords', 'false'), ('secondary_keywords', 'true')] %}
        select distinct
            entry_key,
            character_id,
            {{ is_secondary }} as is_secondary,
            unnest({{ json_text_list(column) }}) as keyword
        from entries
        where {{ json_type_name(column) }} = 'ARRAY'
        {% if not loop.last %}union{% endif %}
    {% endfor %}
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
