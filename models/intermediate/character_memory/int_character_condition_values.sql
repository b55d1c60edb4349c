with

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

elements as (
    select
        entry_key,
        condition_index,
        unnest({{ json_elements('condition_value') }}) as value_json
    from conditions
    where condition_value is not null
),

final as (
    select
        entry_key,
        condition_index,
        {{ json_scalar_text('value_json') }} as value_text,
        {{ json_scalar_number('value_json') }} as value_number
    from elements
)

select * from final
