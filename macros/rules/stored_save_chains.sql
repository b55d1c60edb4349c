{#
    The stored write-time chains of the saves $save_ids (schema-qualified: the statement
    composes a relation of the same name).
#}
{% macro stored_save_chains() -%}
    select * from main.int_lines_chained_to_root
    where list_contains(cast($save_ids as bigint[]), save_id)
{%- endmacro %}
