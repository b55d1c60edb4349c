{#
    The descriptions of the events $ids (model int_memory_events_with_official), as written
    and as the engine lowercases them: what a lone recall holds to test which candidates hold
    the whole query or name a time.
#}
{% macro event_descriptions_by_id() -%}
    select
        event_id,
        description,
        lower(description) as lowered
    from int_memory_events_with_official
    where event_id in (select unnest(cast($ids as bigint[])))
{%- endmacro %}
