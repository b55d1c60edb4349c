{#
    Memories per kind (events, entities, archived) for the service's metrics, read at each
    scrape: DuckDB counts them (a table's count is cheap there); PostgreSQL reads the planner's
    estimate (pg_class.reltuples, kept current by autovacuum), never scanning tables that grow
    with every player. Official memories (tables of their own) count with the players'.
#}
{% macro count_memories() -%}
    {{- adapter.dispatch('count_memories', 'rolemem')() -}}
{%- endmacro %}

{% macro default__count_memories() -%}
    select
        kind,
        sum(memories) as memories
    from (
        select 'event' as kind, count(*) as memories from memory_event
        union all
        select 'event' as kind, count(*) as memories from official_event
        union all
        select 'entity' as kind, count(*) as memories from memory_entity
        union all
        select 'entity' as kind, count(*) as memories from official_entity
        union all
        select 'archived' as kind, count(*) as memories from memory_archive
        union all
        select 'archived' as kind, count(*) as memories from official_archive
    ) as counted
    group by kind
{%- endmacro %}

{% macro postgres__count_memories() -%}
    select
        memory_tables.kind,
        sum(greatest(pg_class.reltuples, 0))::bigint as memories
    from (
        values
        ('event', 'memory_event'),
        ('event', 'official_event'),
        ('entity', 'memory_entity'),
        ('entity', 'official_entity'),
        ('archived', 'memory_archive'),
        ('archived', 'official_archive')
    ) as memory_tables (kind, table_name)
    inner join pg_class on pg_class.oid = to_regclass(memory_tables.table_name)
    group by memory_tables.kind
{%- endmacro %}
