{#
    An object's field as text (a string unquoted).
#}
{% macro json_field_text(json_value, name) -%}
    {{- adapter.dispatch('json_field_text', 'rolemem')(json_value, name) -}}
{%- endmacro %}

{% macro default__json_field_text(json_value, name) -%}
    json_extract_string({{ json_value }}, '$.{{ name }}')
{%- endmacro %}

{% macro postgres__json_field_text(json_value, name) -%}
    (cast({{ json_value }} as json) ->> '{{ name }}')
{%- endmacro %}
