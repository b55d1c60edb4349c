-- Whether each entry with conditions is unlocked, per (character, distinct context). Verdicts
-- depend on the config and the context only, and a game sends few distinct contexts: the
-- Python path keeps these rows as a table, judging a context once when it first arrives, so
-- a turn's statement only looks its candidates up.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
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

pairs as (
    select distinct
        character_id,
        cast(context as varchar) as context_signature
    from requests
),

contexts as (
    select distinct context_signature as context_id from pairs
),

character_conditions as (
    select conditions.*
    from conditions
    {{ semi_join('pairs', 'pairs.character_id = conditions.character_id') }}
),

entry_characters as (
    select distinct
        entry_key,
        character_id
    from character_conditions
),

verdicts as (
    {{ evaluate_conditions('character_conditions', 'condition_values', 'contexts',
        'context_values') }}
),

final as (
    select
        pairs.character_id,
        pairs.context_signature,
        verdicts.entry_key,
        verdicts.is_unlocked,
        verdicts.failed_condition
    from verdicts
    inner join entry_characters
        on entry_characters.entry_key = verdicts.entry_key
    inner join pairs
        on
            pairs.character_id = entry_characters.character_id
            and pairs.context_signature = verdicts.context_id
)

select * from final
