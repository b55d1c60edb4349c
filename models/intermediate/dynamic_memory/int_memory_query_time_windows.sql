-- The time window each query names, if any (昨晚, 上周, 三月, 去年圣诞…: seed time_expressions,
-- macro time_expression_window). A longer expression wins over one it contains (十一月 over
-- 一月, 大前天 over 前天); a year word fixes the year of a month or date; several windows
-- intersect (the shortest wins when they do not overlap).
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

named_years as (
    select
        query_id,
        min(cast(extract(year from now) as integer) + step) as named_year
    from kept
    where unit = 'year'
    group by query_id
),

windows as (
    select
        kept.query_id,
        kept.expression,
        {{ time_expression_window('kept', 'kept.now', 'named_years.named_year') }}
    from kept
    left join named_years
        on named_years.query_id = kept.query_id
),

final as (
    select
        query_id,
        case
            when max(window_start) < min(window_end) then max(window_start)
            else {{ arg_min('window_start', 'window_end - window_start') }}
        end as window_start,
        case
            when max(window_start) < min(window_end) then min(window_end)
            else {{ arg_min('window_end', 'window_end - window_start') }}
        end as window_end,
        array_agg(expression order by expression) as time_expressions
    from windows
    group by query_id
)

select * from final
