{#
    The delete of the saves $save_ids that have no line left (a save's lines go first, macro
    delete_save_lines, in an earlier transaction on DuckDB), one row answered per save.
#}
{% macro delete_empty_saves() -%}
    delete from save
    where
        id in (select unnest(cast($save_ids as bigint[])))
        and not exists (
            select 1
            from line
            where line.save_id = save.id
        )
    returning 1
{%- endmacro %}
