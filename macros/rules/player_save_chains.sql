{#
    The stored write-time chains of every save of the player $user_id (schema-qualified: the
    statement composes a relation of the same name).
#}
{% macro player_save_chains() -%}
    select * from main.int_lines_chained_to_root
    where save_id in (select save.id from save where save.user_id = $user_id)
{%- endmacro %}
