{#
    The saves outside $save_ids that branch from their lines: a fork made at one of them, or
    a save whose own lines continue from one (a fork's first line points into its parent).
    Erasing $save_ids is refused while any is left: their chains pass through its lines.
#}
{% macro save_forks() -%}
    with erased_lines as (
        select line.id from line where line.save_id in (select unnest(cast($save_ids as bigint[])))
    ),

    branching as (
        select line.save_id from line
        where line.parent_line_id in (select erased_lines.id from erased_lines)
        union
        select save.id as save_id from save
        where save.forked_from_line_id in (select erased_lines.id from erased_lines)
    )

    select distinct save_id from branching
    where save_id not in (select unnest(cast($save_ids as bigint[])))
    order by save_id
{%- endmacro %}
