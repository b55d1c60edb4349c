{#
    Whether a character witnessed a line (the story issue's presence rule, once): it is
    omniscient (a narrator), or the line's chain says nothing of presence (every character
    was there: saves without presence data read as before), or it speaks the line (the speaker
    is always present), or it was present: its role, or another role of its agent, is in the
    line's present_role_ids, or its script role in present_script_role_ids.
    `line`: a relation with role_id, script_role_id and the inherited present_role_ids and
    present_script_role_ids (macro inherited_presence); `target`: one with target_role_id and
    target_script_role_id; `witnesses`: the target role's row of int_memory_target_witnesses
    (left-joined: null for a role the role table does not hold).
#}
{% macro is_witnessed(line, target, witnesses) -%}
    {%- set present_roles = json_text_list('cast(' ~ line ~ '.present_role_ids as json)') -%}
    {%- set present_scripts = json_text_list(
        'cast(' ~ line ~ '.present_script_role_ids as json)'
    ) -%}
    (
        coalesce({{ witnesses }}.is_omniscient, false)
        or not {{ says_presence(line) }}
        or coalesce({{ line }}.role_id = {{ target }}.target_role_id, false)
        or coalesce({{ line }}.script_role_id = {{ target }}.target_script_role_id, false)
        or coalesce({{ list_has(
            witnesses ~ '.witness_role_ids', 'cast(' ~ line ~ '.role_id as varchar)'
        ) }}, false)
        or coalesce({{ list_has(
            present_roles, 'cast(' ~ target ~ '.target_role_id as varchar)'
        ) }}, false)
        or coalesce({{ lists_overlap(present_roles, witnesses ~ '.witness_role_ids') }}, false)
        or coalesce({{ list_has(present_scripts, target ~ '.target_script_role_id') }}, false)
    )
{%- endmacro %}
