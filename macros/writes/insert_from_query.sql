{#
    A query's rows appended to a table, its columns matched by name (`by_name`, DuckDB) or by
    position.
#}
{% macro insert_from_query(relation, query, by_name=false) -%}
    insert into {{ relation }}{{ ' by name' if by_name else '' }}
{{ query }}
{%- endmacro %}
