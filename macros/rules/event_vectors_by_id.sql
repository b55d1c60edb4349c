{#
    The vectors of the events $ids (model int_memory_event_embeddings_with_official), by id:
    the description's, then each of `context_columns`, with whether those were stored
    (`has_context`); an event stored without its context vectors (written before them) has
    its own vector for each until maintenance fills them in.
#}
{% macro event_vectors_by_id(context_columns, has_context) -%}
    select
        event_id,
        embedding,
        {%- for name in context_columns %}
            coalesce({{ name }}, embedding) as {{ name }},
        {%- endfor %}
        {{ has_context }} as has_context
    from int_memory_event_embeddings_with_official
    where event_id in (select unnest(cast($ids as bigint[])))
    order by event_id
{%- endmacro %}
