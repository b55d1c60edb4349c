{#
    A JSON array of strings as a list of text.
#}
{% macro json_text_list(json_value) -%}
    {{- adapter.dispatch('json_text_list', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro default__json_text_list(json_value) -%}
    cast(json_extract_string({{ json_value }}, '$[*]') as varchar[])
{%- endmacro %}

{% macro postgres__json_text_list(json_value) -%}
    array(select json_array_elements_text({{ json_value }}))
{%- endmacro %}
