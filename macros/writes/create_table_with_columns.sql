{#
    An empty table of the given columns (a connection's private scratch table).
#}
{% macro create_table_with_columns(relation, columns) -%}
    create table {{ relation }} ({{ columns }})
{%- endmacro %}
