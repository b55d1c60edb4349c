{#
    An edited event's replacement keeps what the player's play earned the old one: strength,
    recalls, pin and last recall.
#}
{% macro restore_event_counters() -%}
    update memory_event
    set
        strength = $strength,
        recall_count = $recalls,
        is_pinned = $pinned,
        last_recalled_at = $recalled
    where id = $id
{%- endmacro %}
