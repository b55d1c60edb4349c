{#
    The lines a batch sent, once per character: one row answered per line recorded (fewer
    when a save sharing them committed them meanwhile).
#}
{% macro insert_extracted_lines() -%}
    insert into memory_extracted_line (
        line_id, target_key, user_id, batch_key, batch_last_line_id
    )
    select
        unnest(cast($line_ids as bigint[])) as line_id,
        $target_key as target_key,
        $user_id as user_id,
        $batch_key as batch_key,
        $batch_last_line_id as batch_last_line_id
    on conflict do nothing
    returning line_id
{%- endmacro %}
