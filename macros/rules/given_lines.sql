{#
    Lines a caller gives in order, standing in for the chain int_lines_chained_to_root: each
    column bound as one list (`bound`: (parameter, column, DuckDB type) triples). The columns
    named given_* are the presence the lines say, inherited along them (macro
    inherited_presence) when `has_presence`, else as they are (no window planned).
#}
{% macro given_lines(bound, has_presence) -%}
    select
        given.save_id,
        {%- for bound_column in bound if not bound_column[1].startswith('given_') %}
        given.{{ bound_column[1] }},
        {%- endfor %}
        {% if has_presence -%}
            {{ inherited_presence(
                'given.given_present_role_ids',
                'given.given_present_script_role_ids',
                'given.line_position',
                'given.save_id'
            ) }}
        {%- else -%}
            given.given_present_role_ids as present_role_ids,
            given.given_present_script_role_ids as present_script_role_ids
        {%- endif %}
    from (
        select
            cast(0 as bigint) as save_id
            {%- for param, name, kind in bound %},
            unnest(cast(${{ param }} as {{ kind }}[])) as {{ name }}
            {%- endfor %}
    ) as given
{%- endmacro %}
