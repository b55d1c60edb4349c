{#
    queryParams filter: for every (context, entry) with conditions, whether all conditions hold
    and, if not, the first that fails. Contexts and conditions arrive exploded into scalar rows
    (a list value = one row per element), so this is joins and aggregates only: nothing is
    built from config or context text, and the context itself reaches SQL as a bound parameter.

    conditions:        entry_key, condition_index, field, operator, condition_value_text
    condition_values:  entry_key, condition_index, value_text, value_number
    contexts:          context_id
    context_values:    context_id, field, value_text, value_number, is_list, raw_value
    A field missing from the context fails its condition, whatever the operator.
#}
{% macro evaluate_conditions(conditions, condition_values, contexts, context_values) %}
with

pairs as (
    select
        contexts.context_id,
        conditions.entry_key,
        conditions.condition_index,
        conditions.field,
        conditions.operator,
        conditions.condition_value_text,
        context_values.raw_value as context_raw_value,
        context_values.field is not null as has_field,
        coalesce(context_values.is_list, false) as context_is_list,
        case
            when condition_values.value_number is not null
                and context_values.value_number is not null
                then context_values.value_number = condition_values.value_number
            else context_values.value_text = condition_values.value_text
        end as is_equal,
        case
            when condition_values.value_number is not null
                and context_values.value_number is not null
                then sign(context_values.value_number - condition_values.value_number)
            when context_values.value_text > condition_values.value_text then 1
            when context_values.value_text < condition_values.value_text then -1
            when context_values.value_text = condition_values.value_text then 0
        end as comparison,
        strpos(context_values.value_text, condition_values.value_text) > 0 as is_contained
    from {{ contexts }} as contexts
    cross join {{ conditions }} as conditions
    left join {{ condition_values }} as condition_values
        on
            condition_values.entry_key = conditions.entry_key
            and condition_values.condition_index = conditions.condition_index
    left join {{ context_values }} as context_values
        on
            context_values.context_id = contexts.context_id
            and context_values.field = conditions.field
),

per_condition as (
    select
        context_id,
        entry_key,
        condition_index,
        field,
        operator,
        condition_value_text,
        max(context_raw_value) as context_raw_value,
        bool_or(has_field) as has_field,
        bool_or(context_is_list) as context_is_list,
        coalesce(bool_or(is_equal), false) as any_equal,
        coalesce(bool_or(comparison > 0), false) as any_greater,
        coalesce(bool_or(comparison >= 0), false) as any_greater_or_equal,
        coalesce(bool_or(comparison < 0), false) as any_less,
        coalesce(bool_or(comparison <= 0), false) as any_less_or_equal,
        coalesce(bool_or(is_contained), false) as any_contained
    from pairs
    group by context_id, entry_key, condition_index, field, operator, condition_value_text
),

-- read by failures and verdicts: computed once (PostgreSQL would run it per reader)
judged as materialized (
    select
        *,
        case
            when not has_field then false
            when operator = 'eq' then any_equal
            when operator = 'ne' then not any_equal
            when operator = 'gt' then any_greater
            when operator = 'gte' then any_greater_or_equal
            when operator = 'lt' then any_less
            when operator = 'lte' then any_less_or_equal
            when operator = 'in' then any_equal
            when operator = 'not_in' then not any_equal
            when operator = 'contains' and context_is_list then any_equal
            when operator = 'contains' then any_contained
            else {{ rolemem_raise(
                "'unknown queryParams operator ' || coalesce('''' || operator || '''', 'null')
                || ' on entry ' || entry_key",
                'boolean'
            ) }}
        end as holds
    from per_condition
),

failures as (
    select
        context_id,
        entry_key,
        -- the failing condition as a designer reads it, with what the context had
        field || ' ' || operator || ' ' || condition_value_text || ' (context: '
        || coalesce(context_raw_value, 'missing') || ')' as failed_condition,
        row_number() over (
            partition by context_id, entry_key order by condition_index
        ) as failure_rank
    from judged
    where not holds
),

verdicts as (
    select
        context_id,
        entry_key,
        bool_and(holds) as is_unlocked
    from judged
    group by context_id, entry_key
),

final as (
    select
        verdicts.context_id,
        verdicts.entry_key,
        verdicts.is_unlocked,
        failures.failed_condition
    from verdicts
    left join failures
        on
            failures.context_id = verdicts.context_id
            and failures.entry_key = verdicts.entry_key
            and failures.failure_rank = 1
)

select * from final
{% endmacro %}
