{#
    The stored messages of character $target_key on save $save_id (the write-time table
    memory_messages), in order.
#}
{% macro stored_target_messages() -%}
    select role, content from memory_messages
    where save_id = $save_id and target_key = $target_key
    order by message_index
{%- endmacro %}
