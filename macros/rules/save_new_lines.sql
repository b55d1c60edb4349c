{#
    The lines of save $save_id its stored write-time chain does not hold yet: what an append
    walks alone (schema-qualified: the statement composes a relation of the same name).
#}
{% macro save_new_lines() -%}
    select line.* from line
    where
        line.save_id = $save_id
        and line.id not in (
            select chain.line_id from main.int_lines_chained_to_root as chain
            where chain.save_id = $save_id
        )
{%- endmacro %}
