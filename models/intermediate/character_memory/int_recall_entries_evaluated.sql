-- Whether each candidate entry is unlocked by the request's context. Candidates are the
-- entries that matched a word or sit in the sticky queue; every entry of the character when
-- the request does not require a match. Judging only candidates keeps a turn's cost in
-- proportion to what is relevant, not to the size of the config.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

matched as (
    select * from {{ ref('int_recall_entries_matched') }}
),

queue as (
    select * from {{ ref('int_recall_queue_items') }}
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

candidates as (
    select
        requests.request_id,
        entries.entry_key
    from requests
    inner join entries
        on entries.character_id = requests.character_id
    where not requests.require_match
    union
    select
        request_id,
        entry_key
    from matched
    union
    select
        request_id,
        entry_key
    from queue
),

candidate_conditions as (
    select conditions.*
    from conditions
    {{ semi_join('candidates', 'candidates.entry_key = conditions.entry_key') }}
),

contexts as (
    select request_id as context_id from requests
),

verdicts as (
    {{ evaluate_conditions('candidate_conditions', 'condition_values', 'contexts',
        'context_values') }}
),

final as (
    select
        candidates.request_id,
        candidates.entry_key,
        -- an entry without conditions is always unlocked
        coalesce(verdicts.is_unlocked, true) as is_unlocked,
        verdicts.failed_condition
    from candidates
    left join verdicts
        on
            verdicts.context_id = candidates.request_id
            and verdicts.entry_key = candidates.entry_key
)

select * from final
