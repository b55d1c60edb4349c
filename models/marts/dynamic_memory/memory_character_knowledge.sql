-- What a character holds about the player on the queried save, one row per memory: the facts
-- current on the save's chain (model int_memory_facts_resolved), the player's entities it may
-- see (their visible mentions, int_memory_entity_mentions_visible), and
-- the strongest result_limit events the save may see (macro is_event_in_scope, the branch
-- rule recall reads), each with the lines it came from.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

facts as (
    select * from {{ ref('int_memory_facts_resolved') }}
),

entities as (
    select * from {{ ref('int_memory_entities_with_official') }}
),

-- the player's entities as the save shows them, and the lines they came from there
entity_texts as (
    select * from {{ ref('int_memory_entity_mentions_visible') }}
),

entity_lines as (
    select * from {{ ref('int_memory_entity_mention_lines') }}
),

events as (
    select * from {{ ref('int_memory_events_with_official') }}
),

event_lines as (
    select * from {{ ref('stg_app__memory_event_lines') }}
),

query_chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

hidden_batches as (
    select * from {{ ref('int_memory_query_hidden_batches') }}
),

current_facts as (
    select
        query_id,
        'fact' as memory_type,
        fact_id as memory_id,
        subject,
        attribute,
        value as content,
        cast(null as integer) as strength,
        save_id,
        cast({{ json_text_list('line_ids_json') }} as bigint[]) as line_ids,
        row_number() over (
            partition by query_id order by subject, attribute, line_position, fact_id
        ) as knowledge_rank
    from facts
    where is_current
),

player_entities as (
    select
        queries.query_id,
        'entity' as memory_type,
        entities.entity_id as memory_id,
        entities.entity_name as subject,
        entities.keyword as attribute,
        entity_texts.description as content,
        entities.strength,
        entity_lines.save_id,
        entity_lines.line_ids,
        row_number() over (
            partition by queries.query_id
            order by entities.strength desc, entities.entity_id
        ) as knowledge_rank
    from entities
    inner join queries
        on
            entities.agent_id = queries.agent_id
            and entities.user_id = queries.user_id
            and entities.scope = 'user'
    -- only those with a mention the save may see
    inner join entity_texts
        on
            entity_texts.query_id = queries.query_id
            and entity_texts.entity_id = entities.entity_id
    left join entity_lines
        on
            entity_lines.query_id = queries.query_id
            and entity_lines.entity_id = entities.entity_id
),

-- the events the save may see, strongest first
seen_events as (
    select
        queries.query_id,
        events.event_id,
        events.description,
        events.strength,
        events.save_id,
        queries.result_limit,
        row_number() over (
            partition by queries.query_id
            order by events.strength desc, events.created_at desc, events.event_id desc
        ) as knowledge_rank
    from events
    inner join queries
        on
            events.agent_id = queries.agent_id
            and events.user_id = queries.user_id
            and events.scope = 'user'
    {{ event_scope_joins('queries.query_id') }}
    where {{ is_event_in_scope('events', 'queries') }}
),

-- the lines each of them came from
source_lines as (
    select
        event_lines.event_id,
        array_agg(event_lines.line_id order by event_lines.line_id) as line_ids
    from event_lines
    where
        event_lines.event_id in (
            select seen_events.event_id
            from seen_events
            where seen_events.knowledge_rank <= seen_events.result_limit
        )
    group by event_lines.event_id
),

strongest_events as (
    select
        seen_events.query_id,
        'event' as memory_type,
        seen_events.event_id as memory_id,
        cast(null as varchar) as subject,
        cast(null as varchar) as attribute,
        seen_events.description as content,
        seen_events.strength,
        seen_events.save_id,
        source_lines.line_ids,
        seen_events.knowledge_rank
    from seen_events
    left join source_lines
        on source_lines.event_id = seen_events.event_id
    where seen_events.knowledge_rank <= seen_events.result_limit
),

final as (
    select * from current_facts
    union all
    select * from player_entities
    union all
    select * from strongest_events
)

select * from final
