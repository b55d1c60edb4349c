{#
    Entities whose merged descriptions the LLM rewrote: the new texts bound as parallel lists
    ($ids, $texts), the merge count cleared.
#}
{% macro consolidate_entity_descriptions() -%}
    update memory_entity
    set
        description = merged.description,
        merge_count = 0,
        updated_at = greatest(memory_entity.updated_at, $now)
    from (
        select
            unnest(cast($ids as bigint[])) as id,
            unnest(cast($texts as varchar[])) as description
    ) as merged
    where memory_entity.id = merged.id
{%- endmacro %}
