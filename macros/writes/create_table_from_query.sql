{#
    A table holding a query's rows (a model materialised where Python reads it), or with
    `empty` the query's columns and no rows, where the table does not exist yet.
#}
{% macro create_table_from_query(relation, query, empty=false) -%}
    {%- if empty -%}
    create table if not exists {{ relation }} as
    select * from ({{ query }}) as model
    where false
{%- else -%}
    create table {{ relation }} as
{{ query }}
{%- endif %}
{%- endmacro %}
