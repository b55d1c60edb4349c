{#
    How a memory's time reads in the prompt, coarser the older it is (dynamic-memory §七):
    the same calendar day as `now` -> YYYY-MM-DD HH:MM; under 7 days -> YYYY-MM-DD HH点;
    under 30 days -> YYYY-MM-DD 上午 (06-12) / 下午 (12-18) / 晚上 (18-06); older -> YYYY-MM-DD.
    Timestamps are naive game-clock times. rolemem.format_memory_time runs this same macro.
#}
{% macro format_memory_time(ts, now) -%}
    {{ adapter.dispatch('format_memory_time', 'rolemem')(ts, now) }}
{%- endmacro %}

{% macro duckdb__format_memory_time(ts, now) -%}
    case
        when {{ ts }} is null then null
        when cast({{ ts }} as date) = cast({{ now }} as date)
            then strftime({{ ts }}, '%Y-%m-%d %H:%M')
        when {{ now }} - {{ ts }} < interval 7 day
            then strftime({{ ts }}, '%Y-%m-%d %H') || '点'
        when {{ now }} - {{ ts }} < interval 30 day
            then strftime({{ ts }}, '%Y-%m-%d') || ' ' || case
                when hour({{ ts }}) >= 6 and hour({{ ts }}) < 12 then '上午'
                when hour({{ ts }}) >= 12 and hour({{ ts }}) < 18 then '下午'
                else '晚上'
            end
        else strftime({{ ts }}, '%Y-%m-%d')
    end
{%- endmacro %}

{% macro default__format_memory_time(ts, now) -%}
    case
        when {{ ts }} is null then null
        when cast({{ ts }} as date) = cast({{ now }} as date)
            then to_char({{ ts }}, 'YYYY-MM-DD HH24:MI')
        when {{ now }} - {{ ts }} < interval '7 days'
            then to_char({{ ts }}, 'YYYY-MM-DD HH24') || '点'
        when {{ now }} - {{ ts }} < interval '30 days'
            then to_char({{ ts }}, 'YYYY-MM-DD') || ' ' || case
                when extract(hour from {{ ts }}) >= 6 and extract(hour from {{ ts }}) < 12
                    then '上午'
                when extract(hour from {{ ts }}) >= 12 and extract(hour from {{ ts }}) < 18
                    then '下午'
                else '晚上'
            end
        else to_char({{ ts }}, 'YYYY-MM-DD')
    end
{%- endmacro %}
