{#
    An empty list of objects (list_of_objects' type): DuckDB's [], PostgreSQL's '[]' json.
#}
{% macro empty_list_of_objects() -%}
    {{- adapter.dispatch('empty_list_of_objects', 'rolemem')() -}}
{%- endmacro %}

{% macro default__empty_list_of_objects() -%}
    []
{%- endmacro %}

{% macro postgres__empty_list_of_objects() -%}
    cast('[]' as json)
{%- endmacro %}
