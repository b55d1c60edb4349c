{#
    The lines extracted events came from (memory_event_line), written with the events, one
    row per position of the bound lists: the lines of the transcript message the extraction
    reply names, else its batch's. The events are new and their lines given once each
    (the caller's), so no conflict check is planned (it costs an insert ~1 ms on DuckDB).
#}
{% macro insert_event_lines() -%}
    insert into memory_event_line (
        event_id, line_id, user_id, target_key, batch_key, last_line_id
    )
    select
        unnest(cast($event_id as bigint[])) as event_id,
        unnest(cast($line_id as bigint[])) as line_id,
        unnest(cast($user_id as varchar[])) as user_id,
        unnest(cast($target_key as varchar[])) as target_key,
        unnest(cast($batch_key as varchar[])) as batch_key,
        unnest(cast($last_line_id as bigint[])) as last_line_id
{%- endmacro %}
