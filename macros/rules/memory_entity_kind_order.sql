{#
    The order the dynamic memory text reads entity kinds in: the player's attributes first,
    then relations with the subject and object, special entities, other relations.
#}
{% macro memory_entity_kind_order(kind) -%}
    case {{ kind }}
        when '用户属性' then 1
        when '与主体和客体的关系' then 2
        when '特殊实体属性' then 3
        when '与其它实体的关系' then 4
        else 5
    end
{%- endmacro %}
