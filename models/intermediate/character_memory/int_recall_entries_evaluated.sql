-- Whether each candidate entry is unlocked by the request's context. Candidates are the
-- entries that matched a word, sit in the sticky queue or are constant (recalled whenever
-- unlocked); every entry of the character when the request does not require a match. The
-- verdicts are judged per distinct context (int_recall_context_verdicts), which DuckDB's
-- Python path keeps as a table: a turn only
-- looks its candidates up. An engine that caches plans but keeps no such table (PostgreSQL)
-- judges the candidates' conditions in the turn's statement instead
-- (var judge_verdicts_per_turn): the same macro, over candidates rather than all entries.
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

-- constant entries and, for a request that does not require a match, all: two selects,
-- so an index on (character_id, is_constant) finds the few constant ones
candidates as (
    select
        requests.request_id,
        entries.entry_key
    from requests
    inner join entries
        on entries.character_id = requests.character_id and entries.is_constant
    union
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

{% if var('judge_verdicts_per_turn', false) %}
    conditions as (
        select * from {{ ref('int_character_conditions_parsed') }}
    ),

    condition_values as (
        select * from {{ ref('int_character_condition_values') }}
    ),

    context_values as (
        select * from {{ ref('int_recall_context_values') }}
    ),

    candidate_conditions as (
        select conditions.*
        from conditions
        {{ semi_join('candidates', 'candidates.entry_key = conditions.entry_key') }}
    ),

    contexts as (
        select distinct cast(context as varchar) as context_id from requests
    ),

    judged as (
    {{ evaluate_conditions('candidate_conditions', 'condition_values', 'contexts',
        'context_values') }}
    ),

    verdicts as (
        select
            context_id as context_signature,
            entry_key,
            is_unlocked,
            failed_condition
        from judged
    ),
{% else %}
    verdicts as (
        select * from {{ ref('int_recall_context_verdicts') }}
    ),
{% endif %}

final as (
    select
        candidates.request_id,
        candidates.entry_key,
        -- an entry without conditions is always unlocked
        coalesce(verdicts.is_unlocked, true) as is_unlocked,
        verdicts.failed_condition
    from candidates
    inner join requests
        on requests.request_id = candidates.request_id
    left join verdicts
        on
            verdicts.context_signature = cast(requests.context as varchar)
            and verdicts.entry_key = candidates.entry_key
)

select * from final
