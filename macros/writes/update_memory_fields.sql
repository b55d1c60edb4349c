{#
    A memory's fields set from bound parameters of their names (an edit, a pin); answers its
    id, or no row when there is no such memory. An event's change bumps its revision, which
    the embedded recall checks the fields it holds against.
#}
{% macro update_memory_fields(table, columns) -%}
    update {{ table }}
    set
        {%- if table in ('memory_event', 'official_event') %}
        revision = revision + 1,
        {%- endif %}
        {%- for column in columns %}
        {{ column }} = ${{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
    where id = $id
    returning id
{%- endmacro %}
