{#
    A number rounded to `places` decimals, as a double: PostgreSQL rounds numerics only.
#}
{% macro round_to(expression, places) -%}
    {{- adapter.dispatch('round_to', 'rolemem')(expression, places) -}}
{%- endmacro %}

{% macro default__round_to(expression, places) -%}
    round({{ expression }}, {{ places }})
{%- endmacro %}

{% macro postgres__round_to(expression, places) -%}
    cast(round(cast({{ expression }} as numeric(38, 12)), {{ places }}) as double precision)
{%- endmacro %}
