{#
    The events stored with a vector but without their context vectors (written before them, or
    by a game writing rows itself), with their scope and context texts (model
    int_memory_event_context_texts), by id: what fill_context_vectors embeds.
#}
{% macro events_missing_context_vectors() -%}
    select
        texts.event_id,
        events.scope,
        texts.context_text,
        texts.long_context_text
    from int_memory_event_context_texts as texts
    inner join int_memory_events_with_official as events
        on texts.event_id = events.event_id
    inner join int_memory_event_embeddings_with_official as vectors
        on texts.event_id = vectors.event_id
    where vectors.context_embedding is null or vectors.long_context_embedding is null
    order by texts.event_id
{%- endmacro %}
