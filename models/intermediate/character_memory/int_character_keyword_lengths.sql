-- The longest keyword of each character, built once per config: recall reads the player's text
-- as its windows up to this length, so a turn never scans every keyword of the config for it.
with

keywords as (
    select * from {{ ref('int_character_entry_keywords') }}
),

final as (
    select
        character_id,
        max(keyword_length) as longest_keyword_length
    from keywords
    group by character_id
)

select * from final
