-- One row per save x fact on the save's current chain, resolved per save x character (macro
-- resolve_facts): which fact and line ended each, the value it replaced in a `one` slot, and
-- whether it is current at the save's tip. A fact of another branch is on that branch's saves
-- only. A chain changes only when its save does, and facts only when rolemem writes them, so
-- DuckDB keeps this as a write-time table (refreshed with the save's history and after each
-- fact write: docs/decisions/write-time-tables.md) and a turn reads its rows; PostgreSQL
-- computes it over the walked chains.
with

facts as (
    select * from {{ ref('int_memory_fact_slots') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

on_chain as (
    select
        chains.save_id,
        facts.agent_id,
        facts.user_id,
        -- one resolution per save x character (text: one key for the rule's windows)
        cast(chains.save_id as varchar) || ':' || facts.agent_id as resolution_key,
        facts.fact_id,
        facts.subject,
        facts.stated_attribute,
        facts.attribute,
        facts.value,
        facts.cardinality,
        facts.supersedes_json,
        facts.line_id,
        facts.line_ids_json,
        facts.save_id as stated_on_save_id,
        facts.batch_key,
        facts.created_at,
        chains.line_position
    from facts
    inner join chains
        on chains.line_id = facts.line_id
),

resolved as (
    {{ resolve_facts('on_chain', 'resolution_key') }}
),

final as (
    select
        resolved.save_id,
        resolved.agent_id,
        resolved.user_id,
        resolved.fact_id,
        resolved.subject,
        resolved.stated_attribute,
        resolved.attribute,
        resolved.value,
        resolved.cardinality,
        resolved.line_id,
        resolved.line_ids_json,
        resolved.stated_on_save_id,
        resolved.batch_key,
        resolved.ended_by_fact_id,
        resolved.ended_at_line_id,
        resolved.replaced_value,
        resolved.supersedes_json,
        resolved.line_position,
        resolved.ended_by_fact_id is null as is_current,
        resolved.created_at
    from resolved
)

select * from final
