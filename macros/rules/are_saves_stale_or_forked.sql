{#
    Whether any of the saves $save_ids is stale (macro stale_saves) and whether any was
    forked from another save's line, in one statement: a read of a save's memory makes it
    current first, and it mostly is already; a save forked from none is its own lineage, so
    most reads plan no recursive walk (~2 ms of ~3.3).
#}
{% macro are_saves_stale_or_forked() -%}
    select
        exists (select 1 from ({{ stale_saves() }}) as stale) as is_stale,
        exists (
            select 1 from save
            where
                list_contains(cast($save_ids as bigint[]), id)
                and forked_from_line_id is not null
        ) as is_fork
{%- endmacro %}
