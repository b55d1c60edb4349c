{#
    A character's messages with the positions of their first and last line, in order.
#}
{% macro spanned_messages() -%}
    select role, content, first_line_position, last_line_position
    from memory_messages
    order by message_index
{%- endmacro %}
