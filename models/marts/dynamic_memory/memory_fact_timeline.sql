-- One row per save x fact on the save's current chain: each slot's values in chain order,
-- which fact and line ended each, and which are current at the save's tip (model
-- int_save_facts_resolved, the rule a turn reads). A fact of another branch is on that
-- branch's saves only.
with

resolved as (
    select * from {{ ref('int_save_facts_resolved') }}
),

final as (
    select
        save_id,
        agent_id,
        user_id,
        fact_id,
        subject,
        stated_attribute,
        attribute,
        value,
        cardinality,
        line_id,
        line_ids_json,
        stated_on_save_id,
        batch_key,
        ended_by_fact_id,
        ended_at_line_id,
        line_position,
        is_current,
        created_at
    from resolved
)

select * from final
