{#
    The branch rule of dynamic recall: whether a query may see an event. An event with no source
    save (added by hand) always; one whose last source line is on the queried save's current
    chain (`chain_line_id`: that line, joined from the query's chain, or null) always; with
    memory_scope 'player', an event of another save of the player too, unless that save is on
    the query's lineage (the saves its chain passes through: a fork's parent), whose events
    follow the chain as the save's own do. Regenerate away and the event is hidden; go back and
    it returns; a fork sees its parent's memories up to the fork point, as the parent reloaded
    there does; nothing is deleted.
#}
{% macro is_event_in_scope(event, query, chain_line_id) -%}
    (
        {{ event }}.save_id is null
        or {{ chain_line_id }} is not null
        or (
            {{ query }}.memory_scope = 'player'
            and ({{ query }}.save_id is null or {{ event }}.save_id <> {{ query }}.save_id)
            and not coalesce(
                {{ list_has(query ~ '.lineage_save_ids', event ~ '.save_id') }}, false
            )
        )
    )
{%- endmacro %}
