{#
    A JSON scalar as text (a string unquoted).
#}
{% macro json_text(json_value) -%}
    {{- adapter.dispatch('json_text', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro default__json_text(json_value) -%}
    json_extract_string({{ json_value }}, '$')
{%- endmacro %}

{% macro postgres__json_text(json_value) -%}
    ({{ json_value }} #>> '{}')
{%- endmacro %}
