{#
    The staging models of player tables: a view, as every staging model, except on a Citus
    coordinator, where it is a table on the coordinator. There the player tables are sharded
    by user_id and an analyst build reads every player: the table gathers each one's rows from
    the workers once per build, and the models above it (the recursive lineage walk, which
    Citus refuses on a distributed table without a player filter, and every join across
    players) read plain coordinator tables, the same SQL as on PostgreSQL and DuckDB.
#}
{%- materialization view_or_gathered_table, default -%}
    {%- if is_citus_build() -%}
        {{ return(materialization_table_default()) }}
    {%- else -%}
        {{ return(materialization_view_default()) }}
    {%- endif -%}
{%- endmaterialization -%}
