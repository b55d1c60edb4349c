{#
    Rows bound as one list per column appended to a table (a config
    or seed table Python fills).
#}
{% macro append_columns(relation, columns) -%}
    insert into {{ relation }} ({{ columns | join(', ') }})
    select
        {%- for column in columns %}
        unnest(${{ column }}) as {{ column }}{{ ',' if not loop.last else '' }}
        {%- endfor %}
{%- endmacro %}
