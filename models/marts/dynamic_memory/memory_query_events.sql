-- One row per event memory a query returns, best first, in the spec's QueryResponse shape.
with

selected as (
    select * from {{ ref('int_memory_events_selected') }}
),

-- the event's fields and times as text come with it (int_memory_event_candidates)
final as (
    select
        query_id,
        selection_rank - 1 as result_index,
        event_id,
        scope,
        description,
        deepinsight,
        place,
        keywords,
        updatetime,
        time_text,
        '[记忆事件]--score=' || {{ format_decimal('score', 4) }} || ',index='
        || cast(event_id as varchar) || '.在' || updatetime || '左右, 地点：'
        || coalesce(place, '未知') || '。详细记忆事件为' || description
        || coalesce('这表明了' || deepinsight, '') as log,
        {{ round_to('score', 4) }} as score,
        created_at
    from selected
    where is_selected
)

select * from final
