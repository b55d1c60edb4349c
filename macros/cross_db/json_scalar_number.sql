{#
    A JSON scalar as a number when it is a JSON number, else null (see json_scalar_text).
#}
{% macro json_scalar_number(json_value) -%}
    case
        when {{ json_type_is(json_value, 'number') }}
            then cast({{ json_text(json_value) }} as double precision)
    end
{%- endmacro %}
