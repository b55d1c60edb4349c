{#
    A line appended under its parent, with its save's player; answers its id.
#}
{% macro insert_line(columns) -%}
    insert into line ({{ columns | join(', ') }}, save_id, parent_line_id, user_id)
    values (
        {% for column in columns %}${{ column }}, {% endfor %}$save_id, $parent, $user_id
    )
    returning id
{%- endmacro %}
