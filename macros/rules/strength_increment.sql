{#
    The spacing increment a memory earns when it is mentioned again (dynamic-memory §八): the
    first row of the increments seed whose under_days exceeds the days since `updated_at`;
    past the last row, the last row's increment. A scalar subquery, so one UPDATE applies it;
    its columns unqualified, so `updated_at` is the updated row's (the seed has no such column).
#}
{% macro strength_increment(updated_at, now, increments) -%}
    coalesce(
        (
            select increment
            from {{ increments }}
            where
                {{ seconds_between(updated_at, now) }} / 86400.0
                < under_days
            order by under_days
            limit 1
        ),
        (
            select increment
            from {{ increments }}
            order by under_days desc
            limit 1
        )
    )
{%- endmacro %}
