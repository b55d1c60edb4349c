{#
    A number as text with `places` decimals (0.5 -> '0.5000' for 4): DuckDB's printf;
    PostgreSQL's numeric rounded to that scale. The numeric's precision is explicit: the
    Python path transpiles from DuckDB's dialect, where a bare numeric is DECIMAL(18,3).
#}
{% macro format_decimal(expression, places) -%}
    {{- adapter.dispatch('format_decimal', 'rolemem')(expression, places) -}}
{%- endmacro %}

{% macro default__format_decimal(expression, places) -%}
    printf('%.{{ places }}f', {{ expression }})
{%- endmacro %}

{% macro postgres__format_decimal(expression, places) -%}
    cast(round(cast({{ expression }} as numeric(38, 12)), {{ places }}) as text)
{%- endmacro %}
