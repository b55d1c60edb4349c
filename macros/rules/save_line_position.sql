{#
    The position of line $line_id on save $save_id's current branch (no row: it is not on it),
    where a page of the branch before it starts.
#}
{% macro save_line_position() -%}
    select line_position from int_lines_chained_to_root
    where save_id = $save_id and line_id = $line_id
{%- endmacro %}
