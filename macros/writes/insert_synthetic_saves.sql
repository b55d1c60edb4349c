{#
    $saves synthetic saves from $first_save_id, each with its tip at the last of its $per_save
    lines (tests/python/synthetic_dialogue.py).
#}
{% macro insert_synthetic_saves() -%}
    insert into save (id, name, last_message_id)
    select
        $first_save_id + saves.save_number as id,
        'synthetic ' || ($first_save_id + saves.save_number) as name,
        $first_line_id - 1 + (saves.save_number + 1) * $per_save as last_message_id
    from range($saves) as saves (save_number)
{%- endmacro %}
