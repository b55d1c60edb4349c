{#
    The stored chain of save $save_id from the earliest message an append rebuilds on (its
    int_memory_targets' resume_line_position): the only lines those messages read
    (schema-qualified: the statement composes a relation of the same name).
#}
{% macro resumed_chain_lines() -%}
    select chain.* from main.int_lines_chained_to_root as chain
    where
        chain.save_id = $save_id
        and chain.line_position >= (
            select min(coalesce(targets.resume_line_position, 0))
            from int_memory_targets as targets
        )
{%- endmacro %}
