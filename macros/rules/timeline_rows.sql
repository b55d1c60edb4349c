{#
    The overview timeline's events (model int_memory_timeline), oldest first.
#}
{% macro timeline_rows() -%}
    select
        event_id,
        scope,
        description,
        deepinsight,
        place,
        scene,
        keywords,
        importance,
        strength,
        save_id,
        first_line_id,
        last_line_id,
        created_at
    from int_memory_timeline
    order by created_at, event_id
{%- endmacro %}
