with

-- each distinct context once, named by its JSON text (the key of its verdicts): a game sends
-- few distinct contexts, so their verdicts are judged once and reused (int_recall_context_verdicts)
requests as (
    select
        signature as request_id,
        cast(signature as json) as context
    from (
        select distinct cast(context as varchar) as signature
        from {{ ref('int_recall_requests') }}
    ) as contexts
),

defaults as (
    select * from {{ ref('recall_context_defaults') }}
),

given as (
    select
        requests.request_id,
        context_entry.key as field,
        cast(context_entry.value as json) as value
    from requests, json_each(requests.context) as context_entry
),

-- a default applies only where the caller's context lacks the field (an anti join: a
-- correlated `not exists` plans several more operators, each paid per recall)
defaulted as (
    select
        requests.request_id,
        defaults.field,
        defaults.value
    from requests
    cross join defaults
    {{ anti_join(
        'given', 'given.request_id = requests.request_id and given.field = defaults.field'
    ) }}
),

resolved as (
    select * from given
    union all
    select * from defaulted
),

elements as (
    select
        request_id,
        field,
        cast(value as varchar) as raw_value,
        {{ json_type_is('value', 'array') }} as is_list,
        unnest({{ json_elements('value') }}) as value_json
    from resolved
),

final as (
    select
        request_id as context_id,
        field,
        raw_value,
        is_list,
        {{ json_scalar_text('value_json') }} as value_text,
        {{ json_scalar_number('value_json') }} as value_number
    from elements
)

select * from final
