{#
    The last non-null value of `value` up to the current row, rows ordered by `position` (a
    non-negative integer) within `partition_by`: a running window expression. DuckDB skips the
    nulls itself; PostgreSQL (before 19) has no IGNORE NULLS, so a running max of the value
    keyed by its zero-padded position stands in (the key makes the latest non-null the max).
#}
{% macro last_non_null(value, position, partition_by) -%}
    {{- adapter.dispatch('last_non_null', 'rolemem')(value, position, partition_by) -}}
{%- endmacro %}

{% macro default__last_non_null(value, position, partition_by) -%}
    last_value({{ value }} ignore nulls) over (
        partition by {{ partition_by }} order by {{ position }}
        rows between unbounded preceding and current row
    )
{%- endmacro %}

{% macro postgres__last_non_null(value, position, partition_by) -%}
    substr(
        max(lpad(cast({{ position }} as varchar), 20, '0') || {{ value }}) over (
            partition by {{ partition_by }} order by {{ position }}
            rows between unbounded preceding and current row
        ),
        21
    )
{%- endmacro %}
