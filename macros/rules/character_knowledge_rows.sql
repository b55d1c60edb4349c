{#
    What the character holds about the player (mart memory_character_knowledge), one row per
    memory, by kind and rank.
#}
{% macro character_knowledge_rows() -%}
    select memory_type, memory_id, subject, attribute, content, strength, save_id, line_ids
    from memory_character_knowledge
    order by memory_type, knowledge_rank
{%- endmacro %}
