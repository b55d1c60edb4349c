{#
    Whether two lists of text share a value (null when either is null): DuckDB's list_has_any;
    PostgreSQL's && (over text[], whatever text type each list holds).
#}
{% macro lists_overlap(left, right) -%}
    {{- adapter.dispatch('lists_overlap', 'rolemem')(left, right) -}}
{%- endmacro %}

{% macro default__lists_overlap(left, right) -%}
    list_has_any({{ left }}, {{ right }})
{%- endmacro %}

{% macro postgres__lists_overlap(left, right) -%}
    (cast({{ left }} as text []) && cast({{ right }} as text []))
{%- endmacro %}
