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
            {{ memory_entity_line(
                'kind', format_timestamp('updated_at', '%Y-%m-%d'), 'description'
            ) }},
            chr(10)
            order by {{ memory_entity_kind_order('kind') }}, result_index
        ) as entity_text
    from entities
    group by query_id
),

event_lines as (
    select
        query_id,
        string_agg(
            {{ memory_event_line('time_text', 'place', 'description') }},
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
            {{ memory_event_line('time_text', 'place', 'description') }},
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
            dynamic_memory_text(
                'timeline_lines.timeline_text',
                'entity_lines.entity_text',
                'event_lines.event_text'
            ),
            'queries.user_name',
            'queries.agent_name'
        ) }} as prompt_text
    from queries
    left join entity_lines on entity_lines.query_id = queries.query_id
    left join event_lines on event_lines.query_id = queries.query_id
    left join timeline_lines on timeline_lines.query_id = queries.query_id
)

select * from final
