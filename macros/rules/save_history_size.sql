{#
    How many lines save $save_id's current branch holds and what is wrong with its chain (its
    row of int_save_history_tips).
#}
{% macro save_history_size() -%}
    select line_count, chain_problem from int_save_history_tips where save_id = $save_id
{%- endmacro %}
