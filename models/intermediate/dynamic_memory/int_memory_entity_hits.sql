-- One row per entity memory a query recalls (in its scope, int_memory_entities_scoped) and
-- query word that matches it, with the entity's v23 tier and rank, within the query's
-- entity_limit. Tiers: (1) 与主体和客体的关系; (2) 用户属性, the player's attributes and
-- facts; (3) 特殊实体属性 and 与其它实体的关系; (4) 记忆画面; newest first within a tier. A
-- word matches a keyword when equal, or (two or more characters) when inside it; a 用户属性
-- also when (two or more characters) inside its description. int_memory_entities_recalled
-- gathers each entity's words; recall's fast path reads these rows and gathers them in
-- Python (entity_scores). Ranked and cut here: a common word may match thousands of a
-- player's entities, of which only entity_limit are sent back.
with

words as (
    select * from {{ ref('int_memory_query_words') }}
),

scoped as (
    select * from {{ ref('int_memory_entities_scoped') }}
),

matched as (
    select
        scoped.query_id,
        scoped.entity_id,
        scoped.scope,
        scoped.kind,
        scoped.entity_name,
        scoped.keyword,
        scoped.description,
        scoped.updated_at,
        scoped.entity_limit,
        words.word,
        case scoped.kind
            when '与主体和客体的关系' then 1
            when '用户属性' then 2
            when '记忆画面' then 4
            else 3
        end as tier
    from scoped
    inner join words
        on words.query_id = scoped.query_id
    where
        words.word = scoped.keyword
        or (length(words.word) > 1 and strpos(scoped.keyword, words.word) > 0)
        or (
            scoped.kind = '用户属性'
            and length(words.word) > 1
            and strpos(scoped.description, words.word) > 0
        )
),

-- every hit of an entity shares its order's key (tier, time, id), so the dense rank of the
-- hits is the entity's rank among the query's matched entities
ranked as (
    select
        *,
        dense_rank() over (
            partition by query_id
            order by tier, updated_at desc, entity_id desc
        ) as entity_rank
    from matched
),

final as (
    select * from ranked
    where entity_rank <= entity_limit
)

select * from final
