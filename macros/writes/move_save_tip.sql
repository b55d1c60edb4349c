{#
    A save's tip moved to its newest line (after lines were appended).
#}
{% macro move_save_tip() -%}
    update save
    set last_message_id = $tip
    where id = $id
{%- endmacro %}
