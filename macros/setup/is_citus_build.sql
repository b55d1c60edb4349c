{#
    True when dbt builds on a Citus coordinator (a PostgreSQL database with the citus
    extension), asked of the database at run time so `dbt build --target postgres` needs no
    other flag there. False on DuckDB and plain PostgreSQL, and while dbt parses. dbt only:
    the Python package dispatches its statements for Citus by engine name instead (`citus__`
    macros), so a macro it also renders asks `execute is defined and is_citus_build()`.
#}
{% macro is_citus_build() %}
    {% if not execute or target.type != 'postgres' %}
        {{ return(false) }}
    {% endif %}
    {% set found = run_query("select count(*) from pg_extension where extname = 'citus'") %}
    {{ return(found.columns[0].values()[0] > 0) }}
{% endmacro %}
