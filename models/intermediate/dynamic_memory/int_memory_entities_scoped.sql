-- The entities and facts a query may recall (the scope; int_memory_entities_recalled ranks
-- them): the agent's official entities; a player's entity only where a mention of it is
-- visible (the events' branch rule), described by its visible fragments
-- (int_memory_entity_mentions_visible); the player's facts current on the queried chain, as
-- the 用户属性 tier (a fact's slot takes over the 用户属性 entity of its subject and
-- attribute); a superseded fact is never a candidate. Recall's fast path reads these rows and
-- ranks them in Python (entity_scores).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
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

final as (
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
)

select * from final
