{#
    An event's vectors, one bound parameter per vector column of memory_event_embedding.
#}
{% macro insert_event_vectors(columns) -%}
    insert into memory_event_embedding (event_id, {{ columns | join(', ') }})
    values (
        $id
        {%- for column in columns %}, ${{ column }}{% endfor %}
    )
{%- endmacro %}
