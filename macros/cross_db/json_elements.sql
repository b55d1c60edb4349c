{#
    A JSON array's elements as a list of JSON; a scalar as a one-element list.
#}
{% macro json_elements(json_value) -%}
    case
        when {{ json_type_is(json_value, 'array') }} then {{ json_array_elements(json_value) }}
        else array[{{ json_value }}]
    end
{%- endmacro %}
