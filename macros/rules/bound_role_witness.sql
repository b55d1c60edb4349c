{#
    The target role's row of int_role_witnesses as bound values (none: a role no role table
    holds, which witnessed what its own role was present for).
#}
{% macro bound_role_witness() -%}
    select
        cast($witness_role_id as bigint) as role_id,
        coalesce(cast($witness_is_omniscient as boolean), false) as is_omniscient,
        cast($witness_role_ids as varchar[]) as witness_role_ids
{%- endmacro %}
