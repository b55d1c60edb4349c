{#
    Save $save_id's stored chain, root to tip: each line's id and the given `columns`, as the
    memory builder runs its models over them again (a character the stored messages lack).
#}
{% macro stored_chain_lines(columns) -%}
    select
        line_id,
        {%- for column in columns %}
        {{ column }}{{ "," if not loop.last }}
        {%- endfor %}
    from int_lines_chained_to_root
    where save_id = $save_id
    order by line_position
{%- endmacro %}
