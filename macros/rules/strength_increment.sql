{#
    The spacing increment a memory earns when it is mentioned again (dynamic-memory §八): the
    first row of the increments seed whose under_days exceeds the days since `updated_at`;
    past the last row, the last row's increment. One scalar subquery, so one UPDATE applies
    it (Citus refuses subqueries under a COALESCE or CASE in a distributed table's UPDATE:
    the rows that qualify sort first, by under_days, then the others, the last first); its
    columns unqualified, so `updated_at` is the updated row's (the seed has no such column).
#}
{% macro strength_increment(updated_at, now, increments) -%}
    {%- set days = seconds_between(updated_at, now) ~ ' / 86400.0' -%}
    (
        select increment
        from {{ increments }}
        order by
            {{ days }} >= under_days,
            case
                when
                    {{ days }}
                    < under_days
                    then under_days
                else -under_days
            end
        limit 1
    )
{%- endmacro %}
