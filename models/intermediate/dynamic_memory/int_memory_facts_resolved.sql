-- Each query's view of its player's facts: the facts stated on the queried save's chain, and
-- whether each is current there. Resolved per chain at query time, never by updating rows, so
-- a reload, a fork or a return to the tip changes the answer and writes nothing. A slot is
-- (subject, attribute after the aliases); on the chain the latest by chain position (not by
-- clock; the later written at one line) holds a `one` slot; a `many` value ends only when a
-- later fact of its slot names it in `supersedes` (or states it again: one row per value).
-- A fact of another branch is not on the chain, so it never hides one that is. A query
-- without a save has no chain: its player's facts are ordered by their lines' ids.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

chains as (
    select * from {{ ref('int_memory_query_chains') }}
),

facts as (
    select * from {{ ref('stg_app__memory_facts') }}
),

attributes as (
    select * from {{ ref('memory_fact_attributes') }}
),

aliases as (
    select * from {{ ref('memory_fact_attribute_aliases') }}
),

-- the queried player's facts heard by the queried agent, each at its chain position, in its
-- slot (the aliases) with the slot's cardinality
on_chain as (
    select
        queries.query_id,
        facts.fact_id,
        facts.subject,
        facts.attribute as stated_attribute,
        coalesce(aliases.attribute, facts.attribute) as attribute,
        facts.value,
        coalesce(attributes.cardinality, 'one') as cardinality,
        facts.supersedes_json,
        facts.save_id,
        facts.line_id,
        facts.line_ids_json,
        facts.batch_key,
        facts.created_at,
        case when queries.save_id is null then facts.line_id else chains.line_position end
            as line_position
    from facts
    inner join queries
        on
            facts.agent_id = queries.agent_id
            and facts.user_id = queries.user_id
    left join chains
        on
            chains.query_id = queries.query_id
            and chains.line_id = facts.line_id
    left join aliases
        on aliases.alias = facts.attribute
    left join attributes
        on attributes.attribute = coalesce(aliases.attribute, facts.attribute)
    where queries.save_id is null or chains.line_id is not null
),

-- the rule, once (macro resolve_facts): which fact ended each
resolved as (
    {{ resolve_facts('on_chain', 'query_id') }}
),

final as (
    select
        query_id,
        fact_id,
        subject,
        stated_attribute,
        attribute,
        value,
        cardinality,
        supersedes_json,
        save_id,
        line_id,
        line_ids_json,
        batch_key,
        ended_by_fact_id,
        ended_at_line_id,
        replaced_value,
        line_position,
        ended_by_fact_id is null as is_current,
        created_at
    from resolved
)

select * from final
