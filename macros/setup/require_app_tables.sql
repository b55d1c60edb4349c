{#
    on-run-start: stop a dbt run/build/test on a database without the application tables (a
    fresh file) with one clear message instead of a catalog error per model (seeding needs none). The tables are created by
    the SQLModel schema (`rolemem init-db`), so their definition stays in one place.
#}
{% macro require_app_tables() %}
    {% if execute and flags.WHICH in ('run', 'build', 'test') %}
        {% set needed = [
            'role', 'save', 'line', 'memory_entity', 'memory_event', 'memory_event_term',
            'memory_event_embedding', 'memory_fact', 'memory_recall_log', 'memory_extraction_batch',
            'memory_loop_state', 'memory_archive', 'memory_maintenance_run',
            'official_entity', 'official_event', 'official_event_term', 'official_event_embedding',
            'official_archive',
            'character_attributes', 'character_events', 'character_dialogue_styles'] %}
        {#- the sources' schema (models/staging/__sources.yml): the game's own on PostgreSQL -#}
        {% set app_schema = 'main' if target.type == 'duckdb'
            else env_var('ROLEMEM_PG_APP_SCHEMA', 'public') %}
        {% set found = run_query(
            "select table_name from information_schema.tables where table_schema = '"
            ~ app_schema ~ "'") %}
        {% set names = found.columns[0].values() %}
        {% set missing = needed | reject('in', names) | list %}
        {% if missing %}
            {{ exceptions.raise_compiler_error(
                "this database has no application tables (" ~ missing | join(', ')
                ~ "): run `rolemem init-db` (or `rolemem init-db --demo`) on it first") }}
        {% endif %}
    {% endif %}
    select 1
{% endmacro %}
