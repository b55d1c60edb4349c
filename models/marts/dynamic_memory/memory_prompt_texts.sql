-- One row per query: the recalled memory as the chat prompt reads it (dynamic-memory §七):
-- the overview timeline first (前情提要, §一), then entity lines by kind (attributes without a
-- date, relations as 日期：描述), then events; timeline and events oldest first as
-- {时间}{地点}:{事件}, the time made coarser the older it is.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

entities as (
    select * from {{ ref('memory_query_entities') }}
),

events as (
    select * from {{ ref('memory_query_events') }}
),

timeline as (
    select * from {{ ref('memory_query_timeline') }}
),

entity_lines as (
    select
        query_id,
        string_agg(
            case
                when kind in ('与主体和客体的关系', '与其它实体的关系')
                    then {{ format_timestamp('updated_at', '%Y-%m-%d') }} || '：' || description
                else description
            end,
            chr(10)
            order by
                case kind
                    when '用户属性' then 1
                    when '与主体和客体的关系' then 2
                    when '特殊实体属性' then 3
                    when '与其它实体的关系' then 4
                    else 5
                end,
                result_index
        ) as entity_text
    from entities
    group by query_id
),

event_lines as (
    select
        query_id,
        string_agg(
            time_text || coalesce(place, '') || ':' || description,
            chr(10)
            order by created_at, event_id
        ) as event_text
    from events
    group by query_id
),

timeline_lines as (
    select
        query_id,
        string_agg(
            time_text || coalesce(place, '') || ':' || description,
            chr(10)
            order by result_index
        ) as timeline_text
    from timeline
    group by query_id
),

final as (
    select
        queries.query_id,
        -- a memory written with the name placeholders (a designer's official one) reads with
        -- the names (macro fill_name_placeholders)
        {{ fill_name_placeholders(
            "concat_ws(
                chr(10),
                '前情提要：' || chr(10) || timeline_lines.timeline_text,
                '脑海中回想起的片段：' || chr(10) || entity_lines.entity_text,
                '脑海中回忆起的事件：' || chr(10) || event_lines.event_text
            )",
            'queries.user_name',
            'queries.agent_name'
        ) }} as prompt_text
    from queries
    left join entity_lines on entity_lines.query_id = queries.query_id
    left join event_lines on event_lines.query_id = queries.query_id
    left join timeline_lines on timeline_lines.query_id = queries.query_id
)

select * from final
