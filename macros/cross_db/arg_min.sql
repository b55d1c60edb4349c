{#
    The value of the row with the smallest key, rows with a null key ignored (the
    implementations are arg_max's, sorted the other way).
#}
{% macro arg_min(value, key) -%}
    {{- adapter.dispatch('arg_max', 'rolemem')(value, key, 'asc') -}}
{%- endmacro %}
