{#
    The reachable `events` of a batch's players (one part of int_memory_events_with_official
    written out, narrowed as the recall statement's sources are) with their token counts; with
    `owners` their agent, scope and player (a batch of one player and agent need not read
    them); with `vectors_table` whether each has its vectors row there and whether that holds
    its context vectors (`has_context`, over the row as `vectors`).
#}
{% macro reachable_events(events, owners, vectors_table, has_context) -%}
    select
        {%- if owners %}
            events.agent_id,
            events.scope,
            events.user_id,
        {%- endif %}
        events.id as event_id,
        events.token_count,
        events.created_at
        {%- if vectors_table %},
            vectors.event_id is not null as has_vector,
            coalesce({{ has_context }}, false) as has_context
        {%- endif %}
    from ({{ events }}) as events
    {%- if vectors_table %}
        left join {{ vectors_table }} as vectors on events.id = vectors.event_id
    {%- endif %}
{%- endmacro %}
