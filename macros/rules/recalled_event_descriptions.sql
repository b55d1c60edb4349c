{#
    The recalled events ($ids) with their descriptions, as int_memory_events_with_official
    holds them (the agent's official ones and the player's), a player's event with its source
    lines (memory_event_line) in id order; an official event has none (ids are unique across
    both tables). Written out, not composed from the model: a per-turn read (a turn's trace),
    whose composed form plans the staging and the union for ~2 ms more. On Citus the read
    names the player $user_id (macro player_filter: one shard; official events are a
    reference table there). `is_recalled`: the test of an id (`@`) against $ids: DuckDB tests
    a list fastest; PostgreSQL seeks its index only for an `in` of rows.
#}
{% macro recalled_event_descriptions() -%}
    {{- adapter.dispatch('recalled_event_descriptions', 'rolemem')() -}}
{%- endmacro %}

{% macro default__recalled_event_descriptions(
    is_recalled='@ in (select unnest(cast($ids as bigint[])))'
) -%}
    select events.id, events.description, events.save_id, sources.line_ids
    from memory_event as events
    left join ( -- noqa: ST05
        select source.event_id, array_agg(source.line_id order by source.line_id) as line_ids
        from memory_event_line as source
        where
            {{ is_recalled | replace('@', 'source.event_id') }}
            and {{ player_filter('source.user_id') }}
        group by source.event_id
    ) as sources on sources.event_id = events.id
    where {{ is_recalled | replace('@', 'events.id') }} and {{ player_filter('events.user_id') }}
    union all
    select id, description, cast(null as bigint) as save_id, cast(null as bigint[]) as line_ids
    from official_event
    where {{ is_recalled | replace('@', 'id') }}
{%- endmacro %}

{% macro duckdb__recalled_event_descriptions() -%}
    {{ default__recalled_event_descriptions(list_has('cast($ids as bigint[])', '@')) }}
{%- endmacro %}
