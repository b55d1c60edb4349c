{#
    Text and number views of a JSON scalar, so conditions compare without re-parsing JSON:
    numbers compare as numbers only when both sides are JSON numbers; anything else compares
    as text (a JSON string's text is unquoted; true/false compare as 'true'/'false').
    DuckDB's json_type says 'ARRAY', 'BIGINT'…; PostgreSQL's json_typeof says 'array',
    'number'…: each engine names its own types.
#}
{% macro json_scalar_text(json_value) -%}
    case
        when {{ json_type_is(json_value, 'null') }} then null
        else {{ json_text(json_value) }}
    end
{%- endmacro %}

{% macro json_scalar_number(json_value) -%}
    case
        when {{ json_type_is(json_value, 'number') }}
            then cast({{ json_text(json_value) }} as double precision)
    end
{%- endmacro %}

{% macro json_elements(json_value) -%}
    {#- a JSON array's elements as a list of JSON; a scalar as a one-element list -#}
    case
        when {{ json_type_is(json_value, 'array') }} then {{ json_array_elements(json_value) }}
        else array[{{ json_value }}]
    end
{%- endmacro %}

{% macro json_type_is(json_value, kind) -%}
    {#- kind: 'null', 'number' or 'array' -#}
    {{- adapter.dispatch('json_type_is', 'rolemem')(json_value, kind) -}}
{%- endmacro %}

{% macro duckdb__json_type_is(json_value, kind) -%}
    {%- if kind == 'number' -%}
        json_type({{ json_value }}) in ('BIGINT', 'UBIGINT', 'DOUBLE', 'HUGEINT')
    {%- else -%}
        json_type({{ json_value }}) = '{{ kind | upper }}'
    {%- endif -%}
{%- endmacro %}

{% macro postgres__json_type_is(json_value, kind) -%}
    json_typeof({{ json_value }}) = '{{ kind }}'
{%- endmacro %}

{% macro json_array_elements(json_value) -%}
    {{- adapter.dispatch('json_array_elements', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro duckdb__json_array_elements(json_value) -%}
    json_extract({{ json_value }}, '$[*]')
{%- endmacro %}

{#- a scalar has no elements (DuckDB's '$[*]' gives an empty list; PostgreSQL would raise) -#}
{% macro postgres__json_array_elements(json_value) -%}
    case
        when json_typeof({{ json_value }}) = 'array'
            then array(select json_array_elements({{ json_value }}))
    end
{%- endmacro %}

{% macro json_text_list(json_value) -%}
    {#- a JSON array of strings as a list of text -#}
    {{- adapter.dispatch('json_text_list', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro duckdb__json_text_list(json_value) -%}
    cast(json_extract_string({{ json_value }}, '$[*]') as varchar[])
{%- endmacro %}

{% macro postgres__json_text_list(json_value) -%}
    array(select json_array_elements_text({{ json_value }}))
{%- endmacro %}

{% macro json_type_name(json_value) -%}
    {#- DuckDB's name of a JSON value's type (VARCHAR, BIGINT, DOUBLE, BOOLEAN, NULL, OBJECT,
        ARRAY), on every engine: messages quote it -#}
    {{- adapter.dispatch('json_type_name', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro duckdb__json_type_name(json_value) -%}
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

{% macro json_field(json_value, name) -%}
    {#- the JSON value of an object's field (`name`: a plain key) -#}
    {{- adapter.dispatch('json_field', 'rolemem')(json_value, name) -}}
{%- endmacro %}

{% macro duckdb__json_field(json_value, name) -%}
    json_extract({{ json_value }}, '$.{{ name }}')
{%- endmacro %}

{% macro postgres__json_field(json_value, name) -%}
    (cast({{ json_value }} as json) -> '{{ name }}')
{%- endmacro %}

{% macro json_field_text(json_value, name) -%}
    {#- an object's field as text (a string unquoted) -#}
    {{- adapter.dispatch('json_field_text', 'rolemem')(json_value, name) -}}
{%- endmacro %}

{% macro duckdb__json_field_text(json_value, name) -%}
    json_extract_string({{ json_value }}, '$.{{ name }}')
{%- endmacro %}

{% macro postgres__json_field_text(json_value, name) -%}
    (cast({{ json_value }} as json) ->> '{{ name }}')
{%- endmacro %}

{% macro json_text(json_value) -%}
    {#- a JSON scalar as text (a string unquoted) -#}
    {{- adapter.dispatch('json_text', 'rolemem')(json_value) -}}
{%- endmacro %}

{% macro duckdb__json_text(json_value) -%}
    json_extract_string({{ json_value }}, '$')
{%- endmacro %}

{% macro postgres__json_text(json_value) -%}
    ({{ json_value }} #>> '{}')
{%- endmacro %}
