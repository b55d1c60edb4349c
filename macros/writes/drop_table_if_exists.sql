{#
    A table of derived rows dropped, to be rebuilt (write-time history tables whose shape
    changed, a demo store recreated).
#}
{% macro drop_table_if_exists(relation) -%}
    drop table if exists {{ relation }}
{%- endmacro %}
