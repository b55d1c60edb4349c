-- The overview timeline (前情提要, dynamic-memory §一/§四) of each query: the player's newest
-- timeline_size events it can see (on the branch being played, macro is_event_in_scope), rank
-- 1 = newest, with the event's fields. Older events leave the timeline, not the store. Var
-- recall_replacements false: no player of the batch has a replacement batch (recall.py asks).
with

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

-- on narrow rows, the fields joined to the newest only
newest as (
    {{ newest_events_per_query(
        ref('int_memory_queries'),
        'events',
        source('app', 'memory_event'),
        ref('int_memory_query_chains'),
        ref('int_memory_query_hidden_batches') if var('recall_replacements', true) else none
    ) }}
),

final as (
    select
        newest.query_id,
        events.*,
        {{ json_text_list('events.keywords_json') }} as keywords,
        newest.timeline_rank
    from newest
    inner join events
        on events.event_id = newest.event_id
)

select * from final
