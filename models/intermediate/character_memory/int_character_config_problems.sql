with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

entry_checks as (
    select
        entry_kind,
        entry_ordinal,
        case
            when {{ json_type_name('keywords') }} <> 'ARRAY' then 'keywords'
            when coalesce(json_array_length(keywords), 0) = 0 then 'keywords'
            when trim(coalesce(content, '')) = '' then 'content'
            when strength is null and entry_kind <> 'dialogue_style' then 'strength'
            when strength not between 1 and 5 then 'strength'
            when {{ json_type_name('query_params') }} <> 'ARRAY' then 'queryParams'
            when {{ json_type_name('secondary_keywords') }} <> 'ARRAY' then 'secondary_keywords'
            when secondary_logic not in ('AND_ANY', 'NOT_ALL', 'NOT_ANY', 'AND_ALL')
                then 'secondary_logic'
            when sticky_turns < 0 then 'sticky_turns'
        end as field,
        'error' as severity,
        case
            when {{ json_type_name('keywords') }} <> 'ARRAY' then 'must be a JSON array of words'
            when coalesce(json_array_length(keywords), 0) = 0 then 'is empty'
            when trim(coalesce(content, '')) = '' then 'is empty'
            when strength is null and entry_kind <> 'dialogue_style' then 'is required (1-5)'
            when strength not between 1 and 5
                then 'must be 1-5, got ' || cast(strength as varchar)
            when {{ json_type_name('query_params') }} <> 'ARRAY'
                then 'must be a JSON array of {field, value, operator}'
            when {{ json_type_name('secondary_keywords') }} <> 'ARRAY'
                then 'must be a JSON array of words'
            when secondary_logic not in ('AND_ANY', 'NOT_ALL', 'NOT_ANY', 'AND_ALL')
                then
                    'must be one of AND_ANY, NOT_ALL, NOT_ANY, AND_ALL, got '''
                    || secondary_logic || ''''
            when sticky_turns < 0
                then
                    'must be a whole number of turns, 0 or more, got '
                    || cast(sticky_turns as varchar)
        end as message
    from entries
),

condition_checks as (
    select
        entries.entry_kind,
        entries.entry_ordinal,
        'queryParams[' || cast(conditions.condition_index - 1 as varchar) || ']' as field,
        'error' as severity,
        case
            when coalesce(trim(conditions.field), '') = '' then 'field is missing'
            when conditions.field_json_type <> 'VARCHAR'
                then 'field must be a string, got ' || lower(conditions.field_json_type)
            when conditions.condition_value is null then 'value is missing'
            when conditions.value_json_type in ('NULL', 'OBJECT')
                then
                    'value must be a number, a string, true/false or a list of them, got '
                    || lower(conditions.value_json_type)
            when conditions.has_bad_value_element
                then 'value lists may hold numbers, strings and true/false only'
            when conditions.operator is null then 'operator is missing'
            when conditions.operator not in {{ query_param_operators() }}
                then
                    'unknown operator ''' || conditions.operator || ''' (expected one of '
                    || {{ "'" ~ query_param_operators() | replace("'", "") ~ "'" }} || ')'
        end as message
    from conditions
    inner join entries
        on entries.entry_key = conditions.entry_key
),

-- the spec's advice; outside it is a warning, not an error
keyword_advice as (
    select
        entry_kind,
        entry_ordinal,
        'keywords' as field,
        'warning' as severity,
        'has ' || cast(json_array_length(keywords) as varchar) || ' keywords; 3-30 are advised'
            as message
    from entries
    where
        -- the length of an array only (PostgreSQL may test the conditions in any order)
        case
            when {{ json_type_name('keywords') }} = 'ARRAY'
                then
                    json_array_length(keywords) > 0
                    and json_array_length(keywords) not between 3 and 30
            else false
        end
),

content_advice as (
    select
        entry_kind,
        entry_ordinal,
        'content' as field,
        'warning' as severity,
        'is ' || cast(length(content) as varchar) || ' characters; '
        || cast(advised_min as varchar) || '-' || cast(advised_max as varchar) || ' are advised'
            as message
    from (
        select
            *,
            case entry_kind when 'event' then 20 else 10 end as advised_min,
            case entry_kind when 'attribute' then 30 when 'event' then 100 else 50 end
                as advised_max
        from entries
    ) as sized
    where
        trim(coalesce(content, '')) <> ''
        and length(content) not between advised_min and advised_max
),

final as (
    select * from entry_checks
    where message is not null
    union all
    select * from condition_checks
    where message is not null
    union all
    select * from keyword_advice
    union all
    select * from content_advice
)

select * from final
