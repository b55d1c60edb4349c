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

-- the queried player's facts heard by the queried agent, each at its chain position
on_chain as (
    select
        queries.query_id,
        facts.fact_id,
        facts.subject,
        facts.attribute as stated_attribute,
        coalesce(aliases.attribute, facts.attribute) as attribute,
        facts.value,
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
    where queries.save_id is null or chains.line_id is not null
),

with_cardinality as (
    select
        on_chain.*,
        coalesce(attributes.cardinality, 'one') as cardinality
    from on_chain
    left join attributes
        on attributes.attribute = on_chain.attribute
),

-- the values each fact names in `supersedes`
named_endings as (
    select
        query_id,
        fact_id as ending_fact_id,
        subject,
        attribute,
        line_position as ending_position,
        unnest({{ json_text_list('supersedes_json') }}) as ended_value
    from with_cardinality
),

-- the next fact of a fact's slot, and the next stating its value again
ordered as (
    select
        *,
        lead(fact_id) over slot_order as next_fact_id,
        lead(line_position) over slot_order as next_position,
        lead(fact_id) over value_order as next_same_value_fact_id,
        lead(line_position) over value_order as next_same_value_position
    from with_cardinality
    window
        slot_order as (
            partition by query_id, subject, attribute order by line_position, fact_id
        ),
        value_order as (
            partition by query_id, subject, attribute, value order by line_position, fact_id
        )
),

-- every later fact that ends one: in a `one` slot the next; in any slot the same value
-- stated again or named in a later fact's `supersedes`
ending_candidates as (
    select
        query_id,
        fact_id,
        next_fact_id as ending_fact_id,
        next_position as ending_position
    from ordered
    where cardinality = 'one' and next_fact_id is not null
    union all
    select
        query_id,
        fact_id,
        next_same_value_fact_id as ending_fact_id,
        next_same_value_position as ending_position
    from ordered
    where next_same_value_fact_id is not null
    union all
    select
        ordered.query_id,
        ordered.fact_id,
        named_endings.ending_fact_id,
        named_endings.ending_position
    from ordered
    inner join named_endings
        on
            named_endings.query_id = ordered.query_id
            and named_endings.subject = ordered.subject
            and named_endings.attribute = ordered.attribute
            and named_endings.ended_value = ordered.value
            and (
                named_endings.ending_position > ordered.line_position
                or (
                    named_endings.ending_position = ordered.line_position
                    and named_endings.ending_fact_id > ordered.fact_id
                )
            )
),

-- the first of them by chain position
first_endings as (
    select
        query_id,
        fact_id,
        min(ending_position) as ending_position
    from ending_candidates
    group by query_id, fact_id
),

endings as (
    select
        ending_candidates.query_id,
        ending_candidates.fact_id,
        min(ending_candidates.ending_fact_id) as ended_by_fact_id
    from ending_candidates
    inner join first_endings
        on
            first_endings.query_id = ending_candidates.query_id
            and first_endings.fact_id = ending_candidates.fact_id
            and first_endings.ending_position = ending_candidates.ending_position
    group by ending_candidates.query_id, ending_candidates.fact_id
),

resolved as (
    select
        ordered.*,
        endings.ended_by_fact_id
    from ordered
    left join endings
        on
            endings.query_id = ordered.query_id
            and endings.fact_id = ordered.fact_id
),

final as (
    select
        resolved.query_id,
        resolved.fact_id,
        resolved.subject,
        resolved.stated_attribute,
        resolved.attribute,
        resolved.value,
        resolved.cardinality,
        resolved.supersedes_json,
        resolved.save_id,
        resolved.line_id,
        resolved.line_ids_json,
        resolved.batch_key,
        resolved.ended_by_fact_id,
        enders.line_id as ended_at_line_id,
        resolved.line_position,
        resolved.ended_by_fact_id is null as is_current,
        resolved.created_at
    from resolved
    left join with_cardinality as enders
        on
            enders.query_id = resolved.query_id
            and enders.fact_id = resolved.ended_by_fact_id
)

select * from final
