-- Each fact in its slot: the attribute as stated, the slot's attribute (seed
-- memory_fact_attribute_aliases maps an alias to it) and the slot's cardinality (seed
-- memory_fact_attributes; an unlisted attribute is `one`). What every resolution of facts
-- reads (int_save_facts_resolved, int_memory_facts_resolved), so a slot is named once.
with

facts as (
    select * from {{ ref('stg_app__memory_facts') }}
),

attributes as (
    select * from {{ ref('memory_fact_attributes') }}
),

aliases as (
    select * from {{ ref('memory_fact_attribute_aliases') }}
),

final as (
    select
        facts.fact_id,
        facts.agent_id,
        facts.user_id,
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
        facts.created_at
    from facts
    left join aliases
        on aliases.alias = facts.attribute
    left join attributes
        on attributes.attribute = coalesce(aliases.attribute, facts.attribute)
)

select * from final
