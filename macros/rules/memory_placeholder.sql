{#
    A memory prompt placeholder, {{name}}, as a SQL string expression (built from pieces so
    Jinja leaves the braces alone).
#}
{% macro memory_placeholder(name) -%}
    ('{' || '{' || '{{ name }}' || '}}')
{%- endmacro %}
