{#
    A new role (a character of the game's line table), with its character config and memory
    owner (both may be null: stg_app__roles gives the owner's default), and whether it is a
    narrator that witnessed every line.
#}
{% macro insert_role() -%}
    insert into role (id, name, character_id, agent_id, omniscient)
    values ($id, $name, $character_id, $agent_id, $omniscient)
{%- endmacro %}
