{#
    The start of day `day` of month `t.month_number` in `named_year`, or (no year named) in the
    latest year where that day is not after `now`.
#}
{% macro calendar_day_start(t, now, named_year, day) -%}
    cast(make_date(
        coalesce({{ named_year }}, case
            when make_date(cast(extract(year from {{ now }}) as integer), {{ t }}.month_number, {{ day }})
                <= cast({{ now }} as date)
                then cast(extract(year from {{ now }}) as integer)
            else cast(extract(year from {{ now }}) as integer) - 1 end),
        {{ t }}.month_number, {{ day }}) as timestamp)
{%- endmacro %}
