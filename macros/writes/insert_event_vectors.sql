{#
    An event's vectors, one bound parameter per vector column of memory_event_embedding, with
    the event's player (null: an official event).
#}
{% macro insert_event_vectors(columns) -%}
    insert into memory_event_embedding (event_id, user_id, {{ columns | join(', ') }})
    values (
        $id, $user_id
        {%- for column in columns %}, ${{ column }}{% endfor %}
    )
{%- endmacro %}
