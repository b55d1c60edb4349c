{#
    The fields a lone recall on the embedded store shows of the events $ids, player's or
    official (macro memory_event_fields), with each event's revision, save and time: read at no
    particular now, as the Python holds them (the time text is each query's, written out there:
    times.memory_time_text).
#}
{% macro memory_event_fields_by_id() -%}
    {%- set columns -%}
        id, revision, scope, save_id, created_at, description, deepinsight, place,
        keywords as keywords_json
    {%- endset -%}
    with

    players as (
        select {{ columns }}
        from memory_event
        where list_contains(cast($ids as bigint[]), id)
    ),

    official as (
        select {{ columns }}
        from official_event
        where list_contains(cast($ids as bigint[]), id)
    ),

    events as (
        {{ union_official('players', 'official') }}
    ),

    queries as (
        select cast(null as timestamp) as now
    ),

    fields as (
        select
            events.id as event_id,
            events.revision,
            events.save_id,
            events.created_at,
            {{ memory_event_fields('events', 'queries') }}
        from events
        cross join queries
    )

    select
        event_id,
        revision,
        save_id,
        created_at,
        scope,
        description,
        deepinsight,
        place,
        keywords,
        updatetime
    from fields
{%- endmacro %}
