with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

final as (
    select distinct
        entry_key,
        character_id,
        unnest(json_extract_string(keywords, '$[*]')) as keyword
    from entries
    where json_type(keywords) = 'ARRAY'
)

select * from final
