{#
    Where maintenance asks which merged entities may be consolidated (model
    int_memory_entities_consolidable): each player x character x save holding the newest
    mention of one of their merged entities (merge_count > 0); a null save for an entity
    whose mentions have no lines.
#}
{% macro merged_entity_saves() -%}
    with

    merged as (
        select
            id,
            user_id,
            agent_id
        from memory_entity
        where scope = 'user' and merge_count > 0
    ),

    newest as (
        select
            merged.user_id,
            merged.agent_id,
            mentions.save_id,
            row_number() over (
                partition by merged.id
                order by mentions.last_line_id desc nulls last, mentions.id desc
            ) as mention_rank
        from merged
        inner join memory_entity_mention as mentions
            on mentions.entity_id = merged.id
    )

    select distinct
        user_id,
        agent_id,
        save_id
    from newest
    where mention_rank = 1
    order by user_id, agent_id, save_id
{%- endmacro %}
