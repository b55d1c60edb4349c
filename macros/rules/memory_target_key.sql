{#
    The key naming the character a save's memory is built for (memory_messages.target_key,
    the loop state's and the extraction batches'): 'role_id=<id>' for a role, else
    'script_role_id=<id>' for a script role; null when neither is given. One rule, read by the
    models and by the Python statements that plan an observation or find stored messages.
#}
{% macro memory_target_key(role_id, script_role_id) -%}
    case
        when {{ role_id }} is not null then 'role_id=' || cast({{ role_id }} as varchar)
        when {{ script_role_id }} is not null then 'script_role_id=' || {{ script_role_id }}
    end
{%- endmacro %}
