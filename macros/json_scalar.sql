{#
    Text and number views of a JSON scalar, so conditions compare without re-parsing JSON:
    numbers compare as numbers only when both sides are JSON numbers; anything else compares
    as text (a JSON string's text is unquoted; true/false compare as 'true'/'false').
#}
{% macro json_scalar_text(json_value) -%}
    case
        when json_type({{ json_value }}) = 'NULL' then null
        else json_extract_string({{ json_value }}, '$')
    end
{%- endmacro %}

{% macro json_scalar_number(json_value) -%}
    case
        when json_type({{ json_value }}) in ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')
            then cast(json_extract_string({{ json_value }}, '$') as double)
    end
{%- endmacro %}

{% macro json_elements(json_value) -%}
    {#- a JSON array's elements as a list of JSON; a scalar as a one-element list -#}
    case
        when json_type({{ json_value }}) = 'ARRAY' then json_extract({{ json_value }}, '$[*]')
        else [{{ json_value }}]
    end
{%- endmacro %}
