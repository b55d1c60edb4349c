-- One row per event of each query's overview timeline (前情提要), oldest first, in the shape
-- of memory_query_events: delivered with the details, so recall never repeats them.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

timeline as (
    select * from {{ ref('int_memory_timeline') }}
),

in_scope as (
    select * from {{ ref('int_memory_events_in_scope') }}
),

final as (
    select
        timeline.query_id,
        row_number() over (
            partition by timeline.query_id order by in_scope.created_at, in_scope.event_id
        ) - 1 as result_index,
        in_scope.event_id,
        in_scope.scope,
        in_scope.description,
        in_scope.deepinsight,
        in_scope.place,
        in_scope.keywords,
        in_scope.save_id,
        strftime(in_scope.created_at, '%Y-%m-%d %H:%M:%S') as updatetime,
        {{ format_memory_time('in_scope.created_at', 'queries.now') }} as time_text,
        in_scope.created_at
    from timeline
    inner join in_scope
        on in_scope.query_id = timeline.query_id and in_scope.event_id = timeline.event_id
    inner join queries
        on queries.query_id = timeline.query_id
)

select * from final
