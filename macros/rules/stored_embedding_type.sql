{#
    The type of the store's event embeddings (DuckDB's catalog): an embedder of another
    dimension is refused before it writes.
#}
{% macro stored_embedding_type() -%}
    select data_type
    from duckdb_columns()
    where table_name = 'memory_event_embedding' and column_name = 'embedding'
{%- endmacro %}
