{#
    What an event's answer row shows of it (memory_query_events, and the embedded store's
    recall, which scores the candidates in Python): its scope and texts, its tags as a list,
    and its time as text, whole and as the prompt reads it relative to the query's now.
    `events`, `queries`: the aliases.
#}
{% macro memory_event_fields(events='events', queries='queries') -%}
    {{ events }}.scope,
    {{ events }}.description,
    {{ events }}.deepinsight,
    {{ events }}.place,
    {{ json_text_list(events ~ '.keywords_json') }} as keywords,
    {{ format_timestamp(events ~ '.created_at', '%Y-%m-%d %H:%M:%S') }} as updatetime,
    {{ format_memory_time(events ~ '.created_at', queries ~ '.now') }} as time_text
{%- endmacro %}
