{#
    The context vectors of an event that lacks them (written before them, or by a game):
    one statement per event, since a list of vectors is one flat array on PostgreSQL.
#}
{% macro fill_event_vectors(columns) -%}
    update memory_event_embedding
    set
        {%- for column in columns %}
        {{ column }} = ${{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
    where event_id = $event_id
{%- endmacro %}
