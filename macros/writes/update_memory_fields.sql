{#
    A memory's fields set from bound parameters of their names (an edit, a pin); answers its
    id, or no row when there is no such memory. `revised`: the table counts its rows'
    changes (an event's revision, which the embedded recall checks what it holds against).
#}
{% macro update_memory_fields(table, columns, revised=false) -%}
    update {{ table }}
    set
        {%- if revised %}
        revision = revision + 1,
        {%- endif %}
        {%- for column in columns %}
        {{ column }} = ${{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
    where id = $id
    returning id
{%- endmacro %}
