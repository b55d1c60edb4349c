{#
    A memory's fields set from bound parameters of their names (an edit, a pin); answers its
    id, or no row when there is no such memory.
#}
{% macro update_memory_fields(table, columns) -%}
    update {{ table }}
    set
        {%- for column in columns %}
        {{ column }} = ${{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
    where id = $id
    returning id
{%- endmacro %}
