{#
    The source lines of the event $id with their target, in line order: what an edit of its
    text keeps (the same memory of the same lines).
#}
{% macro event_source_lines() -%}
    select
        line_id,
        target_key
    from memory_event_line
    where event_id = $id
    order by line_id
{%- endmacro %}
