{#
    A JSON array's elements as a list of JSON (a scalar has none: DuckDB's '$[*]' gives an
    empty list; PostgreSQL would raise, so its case says null).
#}
{% macro json_array_elements(json_value) -%}
    {{- adapter.dispatch('json_array_elements', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro default__json_array_elements(json_value) -%}
    json_extract({{ json_value }}, '$[*]')
{%- endmacro %}

{% macro postgres__json_array_elements(json_value) -%}
    case
        when json_typeof({{ json_value }}) = 'array'
            then array(select json_array_elements({{ json_value }}))
    end
{%- endmacro %}
