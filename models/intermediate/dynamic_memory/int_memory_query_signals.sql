-- One row per (query, event) with a signal: the raw signals a candidate event starts from,
-- before scope (int_memory_event_candidates decides which the query may see). An event shares
-- a word with the query (int_memory_query_lexical: BM25 and the best word tier), is among the
-- dense_candidates nearest by meaning (int_memory_query_dense_candidates: its three
-- cosines), or was created inside the time window the query names; an event with several
-- signals is one row. A caller that knows its batch before the statement plans only what it
-- needs: var recall_dense false (no query has a vector) leaves the dense candidates out, var
-- recall_time_windows false (no query names a time) the window's. The embedded store's recall
-- binds these rows computed in Python from what it holds (rolemem.dynamic_memory.signals).
{%- set dense = var('recall_dense', true) %}
{%- set time_windows = var('recall_time_windows', true) %}
with

{% if time_windows %}
    queries as (
        select * from {{ ref('int_memory_queries') }}
    ),

    events as (
        select * from {{ ref('int_memory_events_with_official') }}
    ),

    time_windows as (
        select * from {{ ref('int_memory_query_time_windows') }}
    ),
{% endif %}

{% if dense %}
    dense as (
        select * from {{ ref('int_memory_query_dense_candidates') }}
    ),
{% endif %}

lexical as (
    select
        query_id,
        event_id,
        bm25_raw,
        word_tier,
        cast(null as double precision) as cosine,
        cast(null as double precision) as context_cosine,
        cast(null as double precision) as long_context_cosine,
        false as is_in_time_window
    from {{ ref('int_memory_query_lexical') }}
),

{% if time_windows %}
    -- the query's events (the agent's official ones and the player's own) by creation time
    reachable as (
        select
            queries.query_id,
            events.event_id,
            events.created_at
        from events
        inner join queries
            on
                events.agent_id = queries.agent_id
                and (events.scope = 'official' or events.user_id = queries.user_id)
    ),

    in_time_window as (
        select
            reachable.query_id,
            reachable.event_id,
            0.0 as bm25_raw,
            0.0 as word_tier,
            cast(null as double precision) as cosine,
            cast(null as double precision) as context_cosine,
            cast(null as double precision) as long_context_cosine,
            true as is_in_time_window
        from reachable
        inner join time_windows
            on
                time_windows.query_id = reachable.query_id
                and reachable.created_at >= time_windows.window_start
                and reachable.created_at < time_windows.window_end
    ),
{% endif %}

signals as (
    select * from lexical
    {% if dense %}
        union all
        select
            query_id,
            event_id,
            0.0 as bm25_raw,
            0.0 as word_tier,
            cosine,
            context_cosine,
            long_context_cosine,
            false as is_in_time_window
        from dense
    {% endif %}
    {% if time_windows %}
        union all
        select * from in_time_window
    {% endif %}
),

-- one row per (query, event): lexical's already are when it is the only signal
final as (
    {% if dense or time_windows %}
        select
            query_id,
            event_id,
            max(bm25_raw) as bm25_raw,
            max(word_tier) as word_tier,
            max(cosine) as cosine,
            max(context_cosine) as context_cosine,
            max(long_context_cosine) as long_context_cosine,
            bool_or(is_in_time_window) as is_in_time_window
        from signals
        group by query_id, event_id
    {% else %}
        select * from signals
    {% endif %}
)

select * from final
