{#
    The characters that speak on save $save_id's current branch, in the order they first
    speak: role or script role, the role's name, the newest name their lines show and how
    many lines they speak.
#}
{% macro save_speakers() -%}
    select
        chain.role_id, chain.script_role_id, max(roles.name) as role_name,
        {{ arg_max('chain.display_name', 'chain.line_position') }} as display_name,
        count(*) as line_count
    from int_lines_chained_to_root as chain
    left join role as roles on roles.id = chain.role_id
    where chain.save_id = $save_id and chain.attribute = 'assistant'
    group by chain.role_id, chain.script_role_id
    order by min(chain.line_position)
{%- endmacro %}
