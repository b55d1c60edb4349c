{#
    An empty `role` table: what a bare game database without one gives the chain's lines.
#}
{% macro no_roles() -%}
    select
        cast(null as bigint) as id,
        cast(null as varchar) as name,
        cast(null as varchar) as character_id,
        cast(null as varchar) as agent_id,
        false as omniscient
    where false
{%- endmacro %}
