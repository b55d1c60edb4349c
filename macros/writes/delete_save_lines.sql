{#
    The delete of the lines of the saves $save_ids, one row answered per line. PostgreSQL
    checks the lines' own foreign key (parent_line_id) when the statement ends: every line
    goes at once. DuckDB checks it against every row the transaction deleted as if it were
    still there, so a line whose child went in the same transaction cannot go: each call
    deletes the lines no line points at (the leaves), and the caller commits between calls.
#}
{% macro delete_save_lines() -%}
    {{- adapter.dispatch('delete_save_lines', 'rolemem')() -}}
{%- endmacro %}

{% macro default__delete_save_lines() -%}
    delete from line
    where save_id in (select unnest(cast($save_ids as bigint[])))
    returning 1
{%- endmacro %}

{% macro duckdb__delete_save_lines() -%}
    delete from line
    where
        save_id in (select unnest(cast($save_ids as bigint[])))
        and id not in (
            select children.parent_line_id
            from line as children
            where children.parent_line_id is not null
        )
    returning 1
{%- endmacro %}
