{#
    A temporary table holding a query's rows, replaced on each use (a walk read by the
    next statements of the same refresh).
#}
{% macro replace_temp_table(relation, query) -%}
    create or replace temp table {{ relation }} as
{{ query }}
{%- endmacro %}
