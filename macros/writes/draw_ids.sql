{#
    $count new keys of `sequence`, ascending: rows written together take them in order, as
    one insert per row would have.
#}
{% macro draw_ids(sequence) -%}
    select nextval('{{ sequence }}') as id
    from range($count)
    order by id
{%- endmacro %}
