{#
    A migration, once per store: each player entity written before entities kept mentions
    gets one, its description with no lines, so it shows wherever it showed before. One row
    answered per mention written.
#}
{% macro backfill_entity_mentions() -%}
    insert into memory_entity_mention (
        entity_id, user_id, agent_id, description, line_ids, created_at
    )
    select
        entities.id as entity_id,
        entities.user_id,
        entities.agent_id,
        entities.description,
        cast('[]' as json) as line_ids,
        entities.updated_at as created_at
    from memory_entity as entities
    where
        entities.user_id is not null
        and not exists (
            select 1
            from memory_entity_mention as mentions
            where mentions.entity_id = entities.id
        )
    returning 1
{%- endmacro %}
