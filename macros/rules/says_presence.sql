{#
    Whether a chain line says who was present (itself, or a line before it on the chain: its
    presence is inherited, macro inherited_presence). A chain none of whose lines says it was
    witnessed whole by every character (macro is_witnessed), so a plan over such a chain needs
    no presence (var loop_presence).
#}
{% macro says_presence(line) -%}
    ({{ line }}.present_role_ids is not null or {{ line }}.present_script_role_ids is not null)
{%- endmacro %}
