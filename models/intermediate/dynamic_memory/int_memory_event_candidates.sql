-- The events a query scores: only those that can be in the answer, never the whole store.
-- A candidate has a signal (int_memory_query_signals: a shared word, a near meaning, the time
-- the query names) and is one of the agent's official events or the player's own, on the
-- branch being played (macro is_event_in_scope). Each comes with its raw signals and the
-- fields scoring reads. A caller that knows its batch before the
-- statement plans only what it needs (each operator is planned on every call): var
-- recall_time_windows false (no query names a time) leaves the window out, var
-- recall_time_answers false (no query asks when) which candidates name a time (asks_when,
-- names_time: the docs block memory_event_score).
{%- set time_windows = var('recall_time_windows', true) %}
{%- set when_questions = var('recall_time_answers', true) %}
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

{% if time_windows %}
    time_windows as (
        select * from {{ ref('int_memory_query_time_windows') }}
    ),
{% endif %}

query_chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

{% if when_questions %}
    -- read through macro semi_join below; lowercased once here, not per pair there
    time_question_words as ( -- noqa: ST03
        select lower(word) as word from {{ ref('memory_time_question_words') }}
    ),

    time_words as ( -- noqa: ST03
        select
            expression as word,
            expression = lower(expression) as is_lowercase
        from {{ ref('time_expressions') }}
    ),
{% endif %}

{#- var recall_replacements false: no player of the batch has a replacement batch #}
{%- set replacements = var('recall_replacements', true) %}
{%- if replacements %}

    hidden_batches as (
        select * from {{ ref('int_memory_query_hidden_batches') }}
    ),
{%- endif %}

-- one row per (query, event) with its raw signals
per_event as (
    select * from {{ ref('int_memory_query_signals') }}
),

{% if when_questions %}
    -- the queries asking when (semi joins: each once, however many words match)
    time_questions as (
        select queries.query_id
        from queries
        {{ semi_join(
            'time_question_words',
            'strpos(lower(queries.query_text), time_question_words.word) > 0'
        ) }}
    ),

    -- their candidates, each description as written and lowercased once
    time_question_texts as (
        select
            per_event.query_id,
            per_event.event_id,
            events.description as text,
            lower(events.description) as lowered
        from per_event
        inner join time_questions
            on time_questions.query_id = per_event.query_id
        inner join events
            on events.event_id = per_event.event_id
    ),

    -- those that name a time, the candidates only (never the whole store): a word as written
    -- (May, not may), or a lowercase one in any case (Yesterday for yesterday)
    time_answers as (
        select
            time_question_texts.query_id,
            time_question_texts.event_id
        from time_question_texts
        {{ semi_join(
            'time_words',
            'strpos(
                case
                    when time_words.is_lowercase then time_question_texts.lowered
                    else time_question_texts.text
                end,
                time_words.word
            ) > 0'
        ) }}
    ),
{% endif %}

final as (
    select
        per_event.*,
        {% if time_windows %}
            time_windows.query_id is not null as has_time_window,
        {% else %}
            false as has_time_window,
        {% endif %}
        -- the whole query inside the description (a retrieval tier: below)
        length(queries.query_text) > 1
        and strpos(lower(events.description), lower(queries.query_text)) > 0
            as has_query_in_description,
        {% if when_questions %}
            time_questions.query_id is not null as asks_when,
            time_answers.event_id is not null as names_time,
        {% else %}
            false as asks_when,
            false as names_time,
        {% endif %}
        events.importance,
        events.feedback,
        events.recall_count,
        events.created_at,
        events.last_recalled_at
    from per_event
    -- every signal comes from the query's reachable events: the event by its key, no sort
    -- of them all
    inner join events
        on events.event_id = per_event.event_id
    inner join queries
        on queries.query_id = per_event.query_id
    {% if time_windows %}
        -- read by the select's has_time_window, in an if of its own
        left join time_windows -- noqa: ST11
            on time_windows.query_id = per_event.query_id
    {% endif %}
    {% if when_questions %}
        -- read by the select's asks_when and names_time, in an if of their own
        left join time_questions -- noqa: ST11
            on time_questions.query_id = per_event.query_id
        left join time_answers -- noqa: ST11
            on
                time_answers.query_id = per_event.query_id
                and time_answers.event_id = per_event.event_id
    {% endif %}
    {{ event_scope_joins(
        'per_event.query_id', hidden_batches='hidden_batches' if replacements else none
    ) }}
    where {{ is_event_in_scope(
        'events', 'queries', hidden_batch_key='hidden_batches.batch_key' if replacements else none
    ) }}
)

select * from final
