{#
    A replacement batch's lines of one relation (memory_batch_line): `sent`, the lines it sent
    again; `replaces`, the last lines of the memories it stands in for.
#}
{% macro insert_batch_lines() -%}
    insert into memory_batch_line (
        batch_key, line_id, relation, user_id, target_key, last_line_id
    )
    select
        $batch_key as batch_key,
        unnest(cast($line_ids as bigint[])) as line_id,
        $relation as relation,
        $user_id as user_id,
        $target_key as target_key,
        $last_line_id as last_line_id
    on conflict do nothing
{%- endmacro %}
