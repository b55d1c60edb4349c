{#
    The stored messages a resumed history rebuilds: each character's from its first message
    the new lines change on.
#}
{% macro delete_resumed_messages(resumed) -%}
    delete from memory_messages as messages
    using {{ resumed }} as resumed
    where
        messages.save_id = resumed.save_id
        and messages.target_key = resumed.target_key
        and messages.message_index >= resumed.resume_message_index
{%- endmacro %}
