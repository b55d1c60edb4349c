{#
    The spacing increment a memory earns when it is mentioned again (dynamic-memory §八): the
    first row of the increments seed whose under_days exceeds the days since `updated_at`;
    past the last row, the last row's increment. A scalar subquery, so one UPDATE applies it.
#}
{% macro strength_increment(updated_at, now, increments) -%}
    coalesce(
        (
            select increments.increment
            from {{ increments }} as increments
            where {{ seconds_between(updated_at, now) }} / 86400.0 < increments.under_days
            order by increments.under_days
            limit 1
        ),
        (
            select increments.increment
            from {{ increments }} as increments
            order by increments.under_days desc
            limit 1
        )
    )
{%- endmacro %}
