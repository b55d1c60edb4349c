{#
    Whole seconds from `start` to `finish` (second boundaries crossed, as DuckDB's
    date_diff('second', …) counts them; negative when `finish` is earlier).
#}
{% macro seconds_between(start, finish) -%}
    {{- adapter.dispatch('seconds_between', 'rolemem')(start, finish) -}}
{%- endmacro %}

{% macro default__seconds_between(start, finish) -%}
    date_diff('second', {{ start }}, {{ finish }})
{%- endmacro %}

{% macro postgres__seconds_between(start, finish) -%}
    (floor(extract(epoch from {{ finish }})) - floor(extract(epoch from {{ start }})))
{%- endmacro %}
