{#
    The chain rows of a save's appended lines (int_lines_chained_to_root over the walk of its
    new lines), placed after the $offset recorded ones of save $save_id. Where the chain says
    who was present (`has_presence`) they inherit it from the recorded chain's tip too: the
    tip's row goes first into the chain's own rule (macro inherited_presence, unchanged by a
    second pass) and is left out after; else every presence is null, as the rule gives.
    DuckDB's write-time tables only.
#}
{% macro appended_chain_rows(has_presence) -%}
    {%- if has_presence -%}
        select * exclude (is_recorded_tip)
        from (
            select
                chain.* replace ({{ inherited_presence(
                    'chain.present_role_ids',
                    'chain.present_script_role_ids',
                    'chain.line_position',
                    'chain.save_id'
                ) }})
            from (
                select
                    * replace (line_position + $offset as line_position),
                    false as is_recorded_tip
                from int_lines_chained_to_root
                union all by name
                select
                    save_id,
                    line_position,
                    present_role_ids,
                    present_script_role_ids,
                    true as is_recorded_tip
                from main.int_lines_chained_to_root
                where save_id = $save_id and line_position = $offset - 1
            ) as chain
        ) as appended
        where not is_recorded_tip
    {%- else -%}
        select * replace (line_position + $offset as line_position)
        from int_lines_chained_to_root
    {%- endif %}
{%- endmacro %}
