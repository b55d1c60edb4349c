-- One row per event of each query's overview timeline (前情提要), oldest first, in the shape
-- of memory_query_events: delivered with the details, so recall never repeats them.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

timeline as (
    select * from {{ ref('int_memory_timeline') }}
),

final as (
    select
        timeline.query_id,
        row_number() over (
            partition by timeline.query_id order by timeline.created_at, timeline.event_id
        ) - 1 as result_index,
        timeline.event_id,
        timeline.scope,
        timeline.description,
        timeline.deepinsight,
        timeline.place,
        timeline.keywords,
        timeline.save_id,
        {{ format_timestamp('timeline.created_at', '%Y-%m-%d %H:%M:%S') }} as updatetime,
        {{ format_memory_time('timeline.created_at', 'queries.now') }} as time_text,
        timeline.created_at
    from timeline
    inner join queries
        on queries.query_id = timeline.query_id
)

select * from final
