-- The time window each query names, if any (昨晚, 上周, 三月, 去年圣诞…: seed time_expressions,
-- macro time_expression_window). A longer expression wins over one it contains (十一月 over
-- 一月, 大前天 over 前天); a year word fixes the year of a month or date; several windows
-- intersect (the shortest wins when they do not overlap, the earliest of equal ones).
-- Dates written out: a year in digits (1900-2099: 2023, 2023年; not an amount, 2000块,
-- $2000) names that year and fixes the year of a month or date where no year word does; a
-- day number written beside a month (October 13, 13 October, 4th October, 10月13日) narrows
-- the month to that day, the latest one not after now when no year is named. An impossible
-- day (30 February) runs on into the next month. Space is spelled out (tab, newline, form
-- feed, return, space): PostgreSQL's \s would also take a vertical tab (and U+3000 under a
-- UTF-8 collation), RE2's not.
{%- set year_pattern =
    "'(?:^|[^0-9$¥￥])((?:19|20)[0-9]{2})(?:[^0-9块元万千百个人多岁%]|$)'" %}
{%- set space = "[\\t\\n\\f\\r ]" %}
{%- set day_after =
    "kept.expression || '" ~ space ~ "*([0-9]{1,2})(?:st|nd|rd|th|日|号)?(?:[^0-9]|$)'" %}
{%- set day_before = "'(?:^|[^0-9])([0-9]{1,2})(?:st|nd|rd|th)?"
    ~ space ~ "+(?:of" ~ space ~ "+)?' || kept.expression" %}
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

expressions as (
    select * from {{ ref('time_expressions') }}
),

matched as (
    select
        queries.query_id,
        queries.query_text,
        queries.now,
        expressions.*
    from queries
    inner join expressions
        on strpos(queries.query_text, expressions.expression) > 0
),

-- an anti join, not a correlated `not exists`: DuckDB plans the latter with several more
-- operators, each paid per query
kept as (
    select matched.*
    from matched
    {{ anti_join(
        'matched as longer',
        'longer.query_id = matched.query_id
            and longer.expression <> matched.expression
            and strpos(longer.expression, matched.expression) > 0'
    ) }}
),

written_years as (
    select
        query_id,
        cast({{ regexp_group('query_text', year_pattern) }} as integer) as written_year
    from queries
),

named_years as (
    select
        written_years.query_id,
        written_years.written_year,
        coalesce(
            min(cast(extract(year from kept.now) as integer) + kept.step),
            written_years.written_year
        ) as named_year
    from written_years
    left join kept
        on kept.query_id = written_years.query_id and kept.unit = 'year'
    group by written_years.query_id, written_years.written_year
),

-- the day written beside a month, if any
dated as (
    select
        kept.*,
        case when kept.unit = 'month_of_year' then cast(coalesce(
            {{ regexp_group('kept.query_text', day_after) }},
            {{ regexp_group('kept.query_text', day_before) }}
        ) as integer) end as written_day
    from kept
),

expression_windows as (
    select
        dated.query_id,
        dated.expression,
        dated.written_day,
        dated.now,
        named_years.named_year,
        {{ time_expression_window('dated', 'dated.now', 'named_years.named_year') }}
    from dated
    left join named_years
        on named_years.query_id = dated.query_id
),

-- the written day of its month (the month's latest start, or its named year's); with no year
-- named, a day still to come this year is last year's
day_starts as (
    select
        *,
        case
            when
                written_day between 1 and 31
                and named_year is null
                and window_start + (written_day - 1) * interval '1 day' > now
                then window_start + (written_day - 1) * interval '1 day' - interval '1 year'
            when written_day between 1 and 31
                then window_start + (written_day - 1) * interval '1 day'
        end as day_start
    from expression_windows
),

windows as (
    select
        query_id,
        expression,
        coalesce(day_start, window_start) as window_start,
        coalesce(day_start + interval '1 day', window_end) as window_end
    from day_starts
    union all
    select
        query_id,
        cast(written_year as varchar) as expression,
        cast(make_date(written_year, 1, 1) as timestamp) as window_start,
        cast(make_date(written_year + 1, 1, 1) as timestamp) as window_end
    from named_years
    where written_year is not null
),

final as (
    select
        query_id,
        case
            when max(window_start) < min(window_end) then max(window_start)
            else {{ arg_min('window_start', 'row(window_end - window_start, window_start)') }}
        end as window_start,
        case
            when max(window_start) < min(window_end) then min(window_end)
            else {{ arg_min('window_end', 'row(window_end - window_start, window_start)') }}
        end as window_end,
        array_agg(expression order by expression) as time_expressions
    from windows
    group by query_id
)

select * from final
