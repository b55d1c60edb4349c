{#
    The JSON value of an object's field (`name`: a plain key).
#}
{% macro json_field(json_value, name) -%}
    {{- adapter.dispatch('json_field', 'rolemem')(json_value, name) -}}
{%- endmacro %}

{% macro default__json_field(json_value, name) -%}
    json_extract({{ json_value }}, '$.{{ name }}')
{%- endmacro %}

{% macro postgres__json_field(json_value, name) -%}
    (cast({{ json_value }} as json) -> '{{ name }}')
{%- endmacro %}
