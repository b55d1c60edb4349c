with

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

exploded as (
    select
        entry_key,
        character_id,
        unnest({{ json_array_elements('query_params') }}) as condition_json,
        generate_subscripts({{ json_array_elements('query_params') }}, 1) as condition_index
    from entries
    where {{ json_type_name('query_params') }} = 'ARRAY'
),

final as (
    select
        entry_key,
        character_id,
        condition_index,
        {{ json_field_text('condition_json', 'field') }} as field,
        {{ json_type_name(json_field('condition_json', 'field')) }} as field_json_type,
        {{ json_type_name(json_field('condition_json', 'value')) }} as value_json_type,
        -- an array value must hold scalars only (no null, object or nested array)
        coalesce(
            (
                select
                    bool_or(
                        {{ json_type_name('elements.element') }} in ('NULL', 'OBJECT', 'ARRAY')
                    )
                from
                    unnest(
                        {{ json_array_elements(json_field('condition_json', 'value')) }}
                    ) as elements (element)
            ),
            false
        ) as has_bad_value_element,
        {{ json_field_text('condition_json', 'operator') }} as operator,
        {{ json_field('condition_json', 'value') }} as condition_value,
        cast({{ json_field('condition_json', 'value') }} as varchar) as condition_value_text
    from exploded
)

select * from final
