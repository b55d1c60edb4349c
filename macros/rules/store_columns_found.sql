{#
    Which of the columns $columns (`table.column`) the DuckDB store's main schema has.
#}
{% macro store_columns_found() -%}
    select table_name || '.' || column_name
    from duckdb_columns()
    where
        schema_name = 'main'
        and list_contains(cast($columns as varchar[]), table_name || '.' || column_name)
{%- endmacro %}
