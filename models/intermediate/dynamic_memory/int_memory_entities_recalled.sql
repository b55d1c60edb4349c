-- Entity memories a query recalls, in the v23 priority order, within its entity_limit: the
-- entities of its scope its words match, ranked (int_memory_entity_hits over
-- int_memory_entities_scoped: visible player entities, official ones, current facts as the
-- 用户属性 tier, so a superseded fact takes no place under the limit), each with the words
-- that matched and its score. Recall's fast path gathers the hits in Python as this does
-- (entity_scores).
with

-- how many of each query's words are its own tokens (the score's denominator)
base_words as (
    select
        query_id,
        count(*) filter (where word_source = 'token') as base_word_count
    from {{ ref('int_memory_query_words') }}
    group by query_id
),

-- each word of a query matching an entity it recalls, with the entity's tier and rank
hits as (
    select * from {{ ref('int_memory_entity_hits') }}
),

-- a word matches an entity at most once (the query's words are distinct); the entity's own
-- columns ride along (one value per entity), not joined back: PostgreSQL estimates a CTE's
-- rows as one and joined the two by a nested loop, every hit entity against every entity
per_entity as (
    select
        query_id,
        entity_id,
        min(tier) as tier,
        array_agg(word order by word) as matched_keywords,
        count(*) as matched_word_count,
        any_value(scope) as scope,
        any_value(kind) as kind,
        any_value(entity_name) as entity_name,
        any_value(keyword) as keyword,
        any_value(description) as description,
        any_value(updated_at) as updated_at,
        min(entity_rank) as entity_rank
    from hits
    group by query_id, entity_id
),

final as (
    select
        per_entity.query_id,
        per_entity.entity_id,
        per_entity.tier,
        per_entity.matched_keywords,
        per_entity.matched_word_count,
        base_words.base_word_count,
        per_entity.scope,
        per_entity.kind,
        per_entity.entity_name,
        per_entity.keyword,
        per_entity.description,
        per_entity.updated_at,
        -- a real division on every engine (PostgreSQL divides integers as integers)
        least(
            1.0,
            cast(per_entity.matched_word_count as double precision)
            / greatest(base_words.base_word_count, 1)
        ) as score,
        per_entity.entity_rank
    from per_entity
    inner join base_words
        on base_words.query_id = per_entity.query_id
)

select * from final
