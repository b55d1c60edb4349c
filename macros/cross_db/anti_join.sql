{#
    Keep the rows with (semi_join) or without (anti_join) a match in `relation`, written where
    a join goes. DuckDB's semi/anti joins plan fewer operators than a correlated [not] exists
    (each operator is paid per call); PostgreSQL has no such join: there the test is an
    [not] exists in the ON of a join with one row, which its planner turns into the same join.
#}
{% macro anti_join(relation, condition) -%}
    {{- adapter.dispatch('filter_join', 'rolemem')(relation, condition, 'anti') -}}
{%- endmacro %}

{% macro default__filter_join(relation, condition, kind) -%}
    {{ kind }} join {{ relation }} on {{ condition }}
{%- endmacro %}

{% macro postgres__filter_join(relation, condition, kind) -%}
    inner join (select 1 as one) as {{ kind }}_{{ relation.split()[-1] }}
        on {{ 'not ' if kind == 'anti' else '' }}exists (
            select 1 from {{ relation }} where {{ condition }}
        )
{%- endmacro %}
