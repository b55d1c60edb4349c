{#
    A listing's facts on the queried save's chain (model int_memory_facts_resolved): the
    current ones, with $history also those a later fact ended; a slot's facts in chain order.
#}
{% macro facts_on_chain() -%}
    select
        fact_id,
        subject,
        attribute,
        stated_attribute,
        value,
        cardinality,
        save_id,
        line_id,
        line_ids_json,
        is_current,
        ended_by_fact_id,
        ended_at_line_id,
        created_at
    from int_memory_facts_resolved
    where is_current or cast($history as boolean)
    order by subject, attribute, line_position, fact_id
{%- endmacro %}
