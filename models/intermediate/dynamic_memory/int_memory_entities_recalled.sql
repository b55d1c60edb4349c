-- Entity memories a query recalls, in the v23 priority order: (1) 与主体和客体的关系 by
-- keyword; (2) the player's 用户属性 by keyword or description; (3) 特殊实体属性 and
-- 与其它实体的关系 by keyword; (4) 记忆画面 by keyword. Newest first within a tier. A word
-- matches a keyword when equal, or (two or more characters) when inside it; one-character
-- words never match inside a description. The player's facts current on the queried chain
-- are the 用户属性 tier too (a fact's slot takes over the 用户属性 entity of its subject and
-- attribute); a superseded fact is never a candidate, so it takes no place under the limit.
-- A player's entity is a candidate only where a mention of it is visible (the events' branch
-- rule), described by its visible fragments (int_memory_entity_mentions_visible).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

-- each word with how many of the query's words are its own tokens (the score's denominator)
words as (
    select
        *,
        count(*) filter (where word_source = 'token') over (partition by query_id)
            as base_word_count
    from {{ ref('int_memory_query_words') }}
),

entities as (
    select * from {{ ref('int_memory_entities_with_official') }}
),

-- a player's entity as the query's save shows it (its visible mentions); none: not shown
mentions as (
    select * from {{ ref('int_memory_entity_mentions_visible') }}
),

{#- var recall_facts false: no player of the batch has a fact, and none of this is planned
    (a turn plans every operator on every call) #}
{%- set with_facts = var('recall_facts', true) %}
{%- if with_facts %}

    facts as (
        select * from {{ ref('int_memory_facts_resolved') }}
    ),
    {#- var recall_fact_history false: no query of the batch holds a past word or a time
        window (recall.py decides it from the bound tokens and texts), so no query reads
        以前…现在… and the test below is not planned; without the variable it is, per query #}
    {%- if var('recall_fact_history', true) %}

        past_words as (
            select * from {{ ref('memory_fact_past_words') }}
        ),

        -- the queries that ask about an earlier time: a past word (以前, 原来 …) or a time window
        -- (each once: a union, or the distinct rows of the words' join)
        past_queries as (
            select {{ '' if var('recall_time_windows', true) else 'distinct' }} queries.query_id
            from queries
            inner join past_words
                on {{ list_has('queries.tokens', 'past_words.word') }}
            {%- if var('recall_time_windows', true) %}
                union
                select query_id
                from {{ ref('int_memory_query_time_windows') }}
            {%- endif %}
        ),
    {%- endif %}

    current_facts as (
        select
            facts.query_id,
            queries.entity_limit,
            facts.fact_id as entity_id,
            'user' as scope,
            '用户属性' as kind,
            facts.subject as entity_name,
            facts.attribute as keyword,
            facts.subject || '的' || facts.attribute || '：'
            {%- if var('recall_fact_history', true) %}
                -- replaced_value: what the fact replaced in its `one` slot on the chain
                || case
                    when
                        past_queries.query_id is not null
                        and facts.replaced_value <> facts.value
                        then '以前' || facts.replaced_value || '，现在' || facts.value
                    else facts.value
                end
            {%- else %}
                || facts.value
            {%- endif %} as description,
            facts.created_at as updated_at
        from facts
        inner join queries
            on queries.query_id = facts.query_id
        {%- if var('recall_fact_history', true) %}
            -- read by the description's case, in an if of its own
            left join past_queries -- noqa: ST11
                on past_queries.query_id = facts.query_id
        {%- endif %}
        where facts.is_current
    ),
{%- endif %}

scoped as (
    select
        queries.query_id,
        queries.entity_limit,
        entities.entity_id,
        entities.scope,
        entities.kind,
        entities.entity_name,
        entities.keyword,
        coalesce(mentions.description, entities.description) as description,
        entities.updated_at
    from entities
    inner join queries
        on
            entities.agent_id = queries.agent_id
            and (entities.scope = 'official' or entities.user_id = queries.user_id)
    left join mentions
        on
            mentions.query_id = queries.query_id
            and mentions.entity_id = entities.entity_id
    {%- if with_facts %}
    -- the slots the query's chain has facts for (current or not): their entities are
    -- replaced (the slot's attribute, or as a fact states it)
        {{ anti_join(
            'facts as slot_facts',
            "slot_facts.query_id = queries.query_id and entities.kind = '用户属性'"
            ~ ' and slot_facts.subject = entities.entity_name'
            ~ ' and entities.keyword in (slot_facts.attribute, slot_facts.stated_attribute)'
        ) }}
    {%- endif %}
    where entities.scope = 'official' or mentions.entity_id is not null
    {%- if with_facts %}
        union all
        select * from current_facts
    {%- endif %}
),

hits as (
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
        words.base_word_count,
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
        any_value(base_word_count) as base_word_count,
        any_value(scope) as scope,
        any_value(kind) as kind,
        any_value(entity_name) as entity_name,
        any_value(keyword) as keyword,
        any_value(description) as description,
        any_value(updated_at) as updated_at,
        any_value(entity_limit) as entity_limit
    from hits
    group by query_id, entity_id
),

ranked as (
    select
        *,
        -- a real division on every engine (PostgreSQL divides integers as integers)
        least(
            1.0,
            cast(matched_word_count as double precision) / greatest(base_word_count, 1)
        ) as score,
        row_number() over (
            partition by query_id
            order by tier, updated_at desc, entity_id desc
        ) as entity_rank
    from per_entity
),

-- every column of ranked but entity_limit (named: PostgreSQL has no `* exclude`)
final as (
    select
        query_id,
        entity_id,
        tier,
        matched_keywords,
        matched_word_count,
        base_word_count,
        scope,
        kind,
        entity_name,
        keyword,
        description,
        updated_at,
        score,
        entity_rank
    from ranked
    where entity_rank <= entity_limit
)

select * from final
