-- What each query's save shows of the player's entities: an entity's visible fragments
-- (int_memory_entity_mentions_seen) each once, in chain order. An entity with no visible
-- mention has no row: it is not recalled there.
with

seen as (
    select * from {{ ref('int_memory_entity_mentions_seen') }}
),

-- a fragment stated on two stretches of the chain reads once, at its first
fragments as (
    select
        query_id,
        entity_id,
        description,
        -- null off the chain (no save, another playthrough): read first, as written
        min(line_position) as line_position,
        min(mention_id) as mention_id
    from seen
    group by query_id, entity_id, description
),

final as (
    select
        query_id,
        entity_id,
        string_agg(
            description, '；' order by line_position nulls first, mention_id
        ) as description
    from fragments
    group by query_id, entity_id
)

select * from final
