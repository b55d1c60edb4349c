{#
    The merged entities a save's chain holds every mention of (model
    int_memory_entities_consolidable: what consolidation rewrites), by id.
#}
{% macro consolidable_entity_rows() -%}
    select
        entity_id as id,
        entity_name,
        kind,
        keyword,
        description,
        save_id,
        first_line_id,
        last_line_id,
        root_line_id,
        target_key,
        batch_key,
        line_ids
    from int_memory_entities_consolidable
    order by entity_id
{%- endmacro %}
