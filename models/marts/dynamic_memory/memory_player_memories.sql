-- One row per live player memory (user scope), events and entities alike, as a player's memory
-- page lists them: the text, strength and times, the save and lines an event was extracted
-- from, and whether that save's current branch still shows it (a reply regenerated or a save
-- point reloaded away hides its events there; nothing is deleted, returning shows them again).
-- An entity's come from its mentions (memory_entity_mention); its description is the row's,
-- every fragment merged (a save shows only its visible ones: memory_character_knowledge).
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

mentions as (
    select * from {{ ref('stg_app__memory_entity_mentions') }}
),

-- the lines each event came from, in id order
source_lines as (
    select
        event_id,
        array_agg(line_id order by line_id) as line_ids
    from event_lines
    group by event_id
),

-- an entity's sources, its mentions': the newest one's save, the span of their lines, and
-- whether a mention's save's current branch still holds its last line (null: none has a save)
entity_sources as (
    select
        mentions.entity_id,
        {{ arg_max('mentions.save_id', 'mentions.last_line_id') }} as save_id,
        min(mentions.first_line_id) as first_line_id,
        max(mentions.last_line_id) as last_line_id,
        bool_or(chains.line_id is not null) filter (where mentions.save_id is not null)
            as is_on_current_branch
    from mentions
    left join chains
        on chains.save_id = mentions.save_id and chains.line_id = mentions.last_line_id
    group by mentions.entity_id
),

-- the lines its mentions came from, each once, in id order
mention_lines as (
    select
        entity_id,
        cast(unnest({{ json_text_list('line_ids_json') }}) as bigint) as line_id
    from mentions
),

entity_lines as (
    select
        entity_id,
        array_agg(distinct line_id order by line_id) as line_ids
    from mention_lines
    group by entity_id
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
        entities.entity_id as memory_id,
        entities.agent_id,
        entities.user_id,
        entities.description,
        cast(null as varchar) as deepinsight,
        cast(null as varchar) as place,
        cast(null as varchar) as scene,
        entities.entity_name,
        entities.entity_type,
        entities.kind as entity_kind,
        entities.keyword,
        array[entities.keyword] as keywords,
        cast(null as double precision) as importance,
        entities.strength,
        entities.recall_count,
        entity_sources.save_id,
        entity_sources.first_line_id,
        entity_sources.last_line_id,
        entity_lines.line_ids,
        entities.is_pinned,
        entity_sources.is_on_current_branch,
        entities.created_at,
        entities.updated_at,
        entities.last_recalled_at
    from entities
    left join entity_sources
        on entity_sources.entity_id = entities.entity_id
    left join entity_lines
        on entity_lines.entity_id = entities.entity_id
    where entities.scope = 'user'
),

final as (
    select * from event_rows
    union all
    select * from entity_rows
)

select * from final
