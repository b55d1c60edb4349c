-- One row per event memory a query returns, best first, in the spec's QueryResponse shape.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

selected as (
    select * from {{ ref('int_memory_events_selected') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

final as (
    select
        selected.query_id,
        selected.selection_rank - 1 as result_index,
        selected.event_id,
        {{ memory_event_fields('events', 'queries') }},
        '[记忆事件]--score=' || {{ format_decimal('selected.score', 4) }} || ',index='
        || cast(selected.event_id as varchar) || '.在'
        || {{ format_timestamp('events.created_at', '%Y-%m-%d %H:%M:%S') }} || '左右, 地点：'
        || coalesce(events.place, '未知') || '。详细记忆事件为' || events.description
        || coalesce('这表明了' || events.deepinsight, '') as log,
        {{ round_to('selected.score', 4) }} as score,
        events.created_at
    from selected
    inner join events
        on events.event_id = selected.event_id
    inner join queries
        on queries.query_id = selected.query_id
    where selected.is_selected
)

select * from final
