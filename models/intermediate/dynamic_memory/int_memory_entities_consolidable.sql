-- The player's merged entities (descriptions appended since the last consolidation) whose
-- mentions all lie on one chain, each query's save's (maintenance asks once per player,
-- character and save of a merged entity's newest mention, memory_scope 'save'): each of
-- their mentions is seen there on the chain (int_memory_entity_mentions_seen, the branch
-- rule) or has no lines. The LLM rewrites such an entity's description into one mention
-- citing all their lines, so the rewrite shows exactly where all of them did. An entity with
-- a mention on another branch, another playthrough or hidden by a replacement keeps its
-- mentions apart (each branch shows its own) and is not consolidated.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

entities as (
    select * from {{ ref('stg_app__memory_entities') }}
),

mentions as (
    select * from {{ ref('stg_app__memory_entity_mentions') }}
),

seen as (
    select * from {{ ref('int_memory_entity_mentions_seen') }}
),

merged as (
    select
        queries.query_id,
        entities.entity_id,
        entities.entity_name,
        entities.kind,
        entities.keyword,
        entities.description
    from entities
    inner join queries
        on
            entities.agent_id = queries.agent_id
            and entities.user_id = queries.user_id
    where entities.scope = 'user' and entities.merge_count > 0
),

-- each merged entity's mentions, and their place on the save's chain (null: off it)
placed as (
    select
        merged.query_id,
        merged.entity_id,
        mentions.save_id,
        mentions.first_line_id,
        mentions.last_line_id,
        mentions.root_line_id,
        mentions.target_key,
        mentions.batch_key,
        mentions.line_ids_json,
        seen.line_position
    from merged
    inner join mentions
        on mentions.entity_id = merged.entity_id
    left join seen
        on
            seen.query_id = merged.query_id
            and seen.mention_id = mentions.mention_id
),

-- the entities on one chain: the deepest mention's source is the rewrite's
on_one_chain as (
    select
        query_id,
        entity_id,
        {{ arg_max('save_id', 'line_position') }} as save_id,
        min(first_line_id) as first_line_id,
        max(last_line_id) as last_line_id,
        {{ arg_max('root_line_id', 'line_position') }} as root_line_id,
        {{ arg_max('target_key', 'line_position') }} as target_key,
        {{ arg_max('batch_key', 'line_position') }} as batch_key
    from placed
    group by query_id, entity_id
    having count(*) filter (where save_id is not null and line_position is null) = 0
),

mention_lines as (
    select
        query_id,
        entity_id,
        cast(unnest({{ json_text_list('line_ids_json') }}) as bigint) as line_id
    from placed
),

line_lists as (
    select
        query_id,
        entity_id,
        array_agg(distinct line_id order by line_id) as line_ids
    from mention_lines
    group by query_id, entity_id
),

final as (
    select
        merged.query_id,
        merged.entity_id,
        merged.entity_name,
        merged.kind,
        merged.keyword,
        merged.description,
        on_one_chain.save_id,
        on_one_chain.first_line_id,
        on_one_chain.last_line_id,
        on_one_chain.root_line_id,
        on_one_chain.target_key,
        on_one_chain.batch_key,
        line_lists.line_ids
    from merged
    inner join on_one_chain
        on
            on_one_chain.query_id = merged.query_id
            and on_one_chain.entity_id = merged.entity_id
    left join line_lists
        on
            line_lists.query_id = merged.query_id
            and line_lists.entity_id = merged.entity_id
)

select * from final
