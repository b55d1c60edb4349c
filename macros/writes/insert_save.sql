{#
    A new save of a player; a fork starts with its tip at the line it branches from.
#}
{% macro insert_save() -%}
    insert into save (id, user_id, name, last_message_id, forked_from_line_id, user_name)
    values ($id, $user_id, $name, $line_id, $line_id, $user_name)
{%- endmacro %}
