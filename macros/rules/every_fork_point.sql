{#
    Every save's fork point (a fork of a fork passes through the one it was forked from): what
    an append's walk of one save's new lines reads for int_save_fork_points.
#}
{% macro every_fork_point() -%}
    select id as save_id, forked_from_line_id from save where forked_from_line_id is not null
{%- endmacro %}
