{#
    An edited event's replacement keeps what the player's play earned the old one: strength,
    recalls, pin and last recall (`table`: the event's, memory_event or official_event).
#}
{% macro restore_event_counters(table='memory_event') -%}
    update {{ table }}
    set
        strength = $strength,
        recall_count = $recalls,
        is_pinned = $pinned,
        last_recalled_at = $recalled
    where id = $id
{%- endmacro %}
