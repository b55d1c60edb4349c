{#
    Postings written before they carried their event's owner get it (agent, scope, player):
    a migration step, once per store.
#}
{% macro fill_postings_owners() -%}
    update memory_event_term
    set
        agent_id = events.agent_id,
        scope = events.scope,
        user_id = events.user_id
    from memory_event as events
    where events.id = memory_event_term.event_id and memory_event_term.agent_id is null
{%- endmacro %}
