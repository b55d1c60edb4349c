{#
    The tables the store's connection sees (the service's readiness probe compares them with
    the tables rolemem's schema defines): information_schema, so one statement on every
    engine, the catalogs' own schemas left out.
#}
{% macro store_table_names() -%}
    select distinct table_name
    from information_schema.tables
    where table_schema not in ('information_schema', 'pg_catalog')
{%- endmacro %}
