-- One row per live player memory (user scope), events and entities alike, as a player's memory
-- page lists them: the text, strength and times, the save and lines an event was extracted
-- from, and whether that save's current branch still shows it (a reply regenerated or a save
-- point reloaded away hides its events there; nothing is deleted, returning shows them again).
with

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

entities as (
    select * from {{ ref('stg_app__memory_entities') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

event_lines as (
    select * from {{ ref('stg_app__memory_event_lines') }}
),

-- the lines each event came from, in id order
source_lines as (
    select
        event_id,
        array_agg(line_id order by line_id) as line_ids
    from event_lines
    group by event_id
),

event_rows as (
    select
        'event' as memory_type,
        events.event_id as memory_id,
        events.agent_id,
        events.user_id,
        events.description,
        events.deepinsight,
        events.place,
        events.scene,
        cast(null as varchar) as entity_name,
        cast(null as varchar) as entity_type,
        cast(null as varchar) as entity_kind,
        cast(null as varchar) as keyword,
        {{ json_text_list('events.keywords_json') }} as keywords,
        events.importance,
        events.strength,
        events.recall_count,
        events.save_id,
        events.first_line_id,
        events.last_line_id,
        source_lines.line_ids,
        events.is_pinned,
        case
            when events.save_id is not null then chains.line_id is not null
        end as is_on_current_branch,
        events.created_at,
        events.updated_at,
        events.last_recalled_at
    from events
    left join chains
        on chains.save_id = events.save_id and chains.line_id = events.last_line_id
    left join source_lines
        on source_lines.event_id = events.event_id
    where events.scope = 'user'
),

entity_rows as (
    select
        'entity' as memory_type,
        entity_id as memory_id,
        agent_id,
        user_id,
        description,
        cast(null as varchar) as deepinsight,
        cast(null as varchar) as place,
        cast(null as varchar) as scene,
        entity_name,
        entity_type,
        kind as entity_kind,
        keyword,
        array[keyword] as keywords,
        cast(null as double precision) as importance,
        strength,
        recall_count,
        cast(null as bigint) as save_id,
        cast(null as bigint) as first_line_id,
        cast(null as bigint) as last_line_id,
        cast(null as bigint[]) as line_ids,
        is_pinned,
        cast(null as boolean) as is_on_current_branch,
        created_at,
        updated_at,
        last_recalled_at
    from entities
    where scope = 'user'
),

final as (
    select * from event_rows
    union all
    select * from entity_rows
)

select * from final
