-- Whether each entry of the request's character is unlocked by the request's context.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

conditions as (
    select * from {{ ref('int_character_conditions_parsed') }}
),

condition_values as (
    select * from {{ ref('int_character_condition_values') }}
),

context_values as (
    select * from {{ ref('int_recall_context_values') }}
),

contexts as (
    select request_id as context_id from requests
),

verdicts as (
    {{ evaluate_conditions('conditions', 'condition_values', 'contexts', 'context_values') }}
),

final as (
    select
        requests.request_id,
        entries.entry_key,
        -- an entry without conditions is always unlocked
        coalesce(verdicts.is_unlocked, true) as is_unlocked,
        verdicts.failed_condition
    from requests
    inner join entries
        on entries.character_id = requests.character_id
    left join verdicts
        on
            verdicts.context_id = requests.request_id
            and verdicts.entry_key = entries.entry_key
)

select * from final
