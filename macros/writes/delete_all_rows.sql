{#
    Every row of a table Python refills (a private copy of a config or seed table).
#}
{% macro delete_all_rows(relation) -%}
    delete from {{ relation }}
{%- endmacro %}
