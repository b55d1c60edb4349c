{#
    A line appended under its parent; answers its id.
#}
{% macro insert_line(columns) -%}
    insert into line ({{ columns | join(', ') }}, save_id, parent_line_id)
    values (
        {% for column in columns %}${{ column }}, {% endfor %}$save_id, $parent
    )
    returning id
{%- endmacro %}
