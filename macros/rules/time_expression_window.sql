{#
    The time window a time expression names, relative to the query's clock `now` (naive game
    time): two columns, window_start (inclusive) and window_end (exclusive). `t` is a relation
    alias with the columns of the seed time_expressions; `named_year` is the year a year word
    in the same query names (去年三月, 去年圣诞), or null for the latest such month or date.
    day: that day (step 0 today, -1 yesterday) from start_hour to end_hour (30 = 06:00 the next
    day); week (Monday first), month, year: the calendar unit `step` units away.
#}
{% macro time_expression_window(t, now, named_year) -%}
    {%- set month_start = calendar_day_start(t, now, named_year, '1') -%}
    {%- set date_start = calendar_day_start(t, now, named_year, t ~ '.day_number') -%}
    case {{ t }}.unit
        when 'day' then date_trunc('day', {{ now }}) + {{ t }}.step * interval '1 day'
            + coalesce({{ t }}.start_hour, 0) * interval '1 hour'
        when 'week' then date_trunc('week', {{ now }}) + {{ t }}.step * interval '7 day'
        when 'month' then date_trunc('month', {{ now }}) + {{ t }}.step * interval '1 month'
        when 'year' then date_trunc('year', {{ now }}) + {{ t }}.step * interval '1 year'
        when 'month_of_year' then {{ month_start }}
        when 'annual_date' then {{ date_start }}
    end as window_start,
    case {{ t }}.unit
        when 'day' then date_trunc('day', {{ now }}) + {{ t }}.step * interval '1 day'
            + coalesce({{ t }}.end_hour, 24) * interval '1 hour'
        when 'week' then date_trunc('week', {{ now }}) + ({{ t }}.step + 1) * interval '7 day'
        when 'month' then date_trunc('month', {{ now }}) + ({{ t }}.step + 1) * interval '1 month'
        when 'year' then date_trunc('year', {{ now }}) + ({{ t }}.step + 1) * interval '1 year'
        when 'month_of_year' then {{ month_start }} + interval '1 month'
        when 'annual_date' then {{ date_start }} + coalesce({{ t }}.days, 1) * interval '1 day'
    end as window_end
{%- endmacro %}
