{#
    A table of derived rows dropped, to be rebuilt (write-time history tables whose shape
    changed, a demo store recreated); `kind` 'view' for a view an older build left in its
    place.
#}
{% macro drop_table_if_exists(relation, kind='table') -%}
    drop {{ 'view' if kind == 'view' else 'table' }} if exists {{ relation }}
{%- endmacro %}
