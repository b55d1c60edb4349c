{#
    The branch rule of dynamic recall: whether a query may see an event. An event with no source
    save (added by hand) always; with memory_scope 'player', an event of another save of the
    player always; otherwise only while its last source line is on the queried save's current
    chain (`chain_line_id`: that line, joined from the query's chain, or null). Regenerate away
    and the event is hidden; go back and it returns; nothing is deleted.
#}
{% macro is_event_in_scope(event, query, chain_line_id) -%}
    (
        {{ event }}.save_id is null
        or (
            {{ query }}.memory_scope = 'player'
            and ({{ query }}.save_id is null or {{ event }}.save_id <> {{ query }}.save_id)
        )
        or {{ chain_line_id }} is not null
    )
{%- endmacro %}
