{#
    The lines an extracted event came from (memory_event_line), written with the event: the
    lines of the transcript message the extraction reply names, else its batch's.
#}
{% macro insert_event_lines() -%}
    insert into memory_event_line (
        event_id, line_id, user_id, target_key, batch_key, last_line_id
    )
    select
        $event_id as event_id,
        unnest(cast($line_ids as bigint[])) as line_id,
        $user_id as user_id,
        $target_key as target_key,
        $batch_key as batch_key,
        $last_line_id as last_line_id
    on conflict do nothing
{%- endmacro %}
