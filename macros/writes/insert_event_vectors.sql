{#
    An event's vectors, one bound parameter per vector column of memory_event_embedding, with
    the event's player (null: an official event, into `table` official_event_embedding).
#}
{% macro insert_event_vectors(columns, table='memory_event_embedding') -%}
    insert into {{ table }} (event_id, user_id, {{ columns | join(', ') }})
    values (
        $id, $user_id
        {%- for column in columns %}, ${{ column }}{% endfor %}
    )
{%- endmacro %}
