{#
    The context vectors of an event that lacks them (written before them, or by a game):
    one statement per event, since a list of vectors is one flat array on PostgreSQL.
    `table`: memory_event_embedding, or official_event_embedding for an official event's.
#}
{% macro fill_event_vectors(columns, table='memory_event_embedding') -%}
    update {{ table }}
    set
        {%- for column in columns %}
        {{ column }} = ${{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
    where event_id = $event_id
{%- endmacro %}
