{#
    The dynamic memory text from its three blocks' lines (each null when empty): the overview
    timeline (前情提要), the entities, the events, each under its header; an empty block goes
    with its header.
#}
{% macro dynamic_memory_text(timeline_text, entity_text, event_text) -%}
    concat_ws(
        chr(10),
        '前情提要：' || chr(10) || {{ timeline_text }},
        '脑海中回想起的片段：' || chr(10) || {{ entity_text }},
        '脑海中回忆起的事件：' || chr(10) || {{ event_text }}
    )
{%- endmacro %}
