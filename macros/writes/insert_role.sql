{#
    A new role (a character of the game's line table).
#}
{% macro insert_role() -%}
    insert into role (id, name)
    values ($id, $name)
{%- endmacro %}
