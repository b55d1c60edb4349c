{#
    Who was present for each line of a chain, as two select-list columns `present_role_ids`
    and `present_script_role_ids` (JSON text): what the line says, else what the line before it
    on the chain says (a line saying either list says both: the other is empty); null while no
    line before it said (everyone was present). A running window: lines ordered by `position`
    within `partition_by`. Applying it again to its own output changes nothing, so a chain's
    stretch that starts mid-chain keeps what its lines inherited.
#}
{% macro inherited_presence(role_ids, script_role_ids, position, partition_by) -%}
    {%- set says = '(' ~ role_ids ~ ' is not null or ' ~ script_role_ids ~ ' is not null)' -%}
    {{ last_non_null(
        'case when ' ~ says ~ ' then coalesce(' ~ role_ids ~ ", '[]') end",
        position,
        partition_by
    ) }} as present_role_ids,
    {{ last_non_null(
        'case when ' ~ says ~ ' then coalesce(' ~ script_role_ids ~ ", '[]') end",
        position,
        partition_by
    ) }} as present_script_role_ids
{%- endmacro %}
