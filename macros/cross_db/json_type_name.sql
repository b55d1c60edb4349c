{#
    DuckDB's name of a JSON value's type (VARCHAR, BIGINT, DOUBLE, BOOLEAN, NULL, OBJECT,
    ARRAY), on every engine: messages quote it.
#}
{% macro json_type_name(json_value) -%}
    {{- adapter.dispatch('json_type_name', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro default__json_type_name(json_value) -%}
    json_type({{ json_value }})
{%- endmacro %}

{% macro postgres__json_type_name(json_value) -%}
    case json_typeof({{ json_value }})
        when 'string' then 'VARCHAR'
        when 'number' then
            case when cast({{ json_value }} as text) ~ '^-?[0-9]+$' then 'BIGINT' else 'DOUBLE' end
        when 'boolean' then 'BOOLEAN'
        when 'null' then 'NULL'
        when 'object' then 'OBJECT'
        when 'array' then 'ARRAY'
    end
{%- endmacro %}
