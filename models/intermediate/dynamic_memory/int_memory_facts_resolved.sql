-- Each query's view of its player's facts: the facts stated on the queried save's chain, and
-- whether each is current there. Resolved per chain, never by updating rows, so a reload, a
-- fork or a return to the tip changes the answer and writes nothing. A query with a save
-- reads its save's resolution (int_save_facts_resolved: on DuckDB a write-time table, so a
-- turn plans a lookup, not the rule); a query without a save has no chain: its player's facts
-- are ordered by their lines' ids, by the same rule (macro resolve_facts). Var
-- recall_saveless false (every query of the batch names a save) leaves that part out.
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

saved as (
    select
        queries.query_id,
        resolved.fact_id,
        resolved.subject,
        resolved.stated_attribute,
        resolved.attribute,
        resolved.value,
        resolved.cardinality,
        resolved.supersedes_json,
        resolved.stated_on_save_id as save_id,
        resolved.line_id,
        resolved.line_ids_json,
        resolved.batch_key,
        resolved.ended_by_fact_id,
        resolved.ended_at_line_id,
        resolved.replaced_value,
        resolved.line_position,
        resolved.is_current,
        resolved.created_at
    from {{ ref('int_save_facts_resolved') }} as resolved
    inner join queries
        on
            resolved.save_id = queries.save_id
            and resolved.agent_id = queries.agent_id
            and resolved.user_id = queries.user_id
),

{%- if var('recall_saveless', true) %}

    facts as (
        select * from {{ ref('int_memory_fact_slots') }}
    ),

    -- the player's facts heard by the agent, in their slots, by their lines' ids
    unsaved as (
        select
            queries.query_id,
            facts.fact_id,
            facts.subject,
            facts.stated_attribute,
            facts.attribute,
            facts.value,
            facts.cardinality,
            facts.supersedes_json,
            facts.save_id,
            facts.line_id,
            facts.line_ids_json,
            facts.batch_key,
            facts.created_at,
            facts.line_id as line_position
        from facts
        inner join queries
            on
                facts.agent_id = queries.agent_id
                and facts.user_id = queries.user_id
        where queries.save_id is null
    ),

    -- the rule, once (macro resolve_facts): which fact ended each
    unsaved_resolved as (
        {{ resolve_facts('unsaved', 'query_id') }}
    ),
{%- endif %}

final as (
    select * from saved
    {%- if var('recall_saveless', true) %}
        union all
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
        from unsaved_resolved
    {%- endif %}
)

select * from final
