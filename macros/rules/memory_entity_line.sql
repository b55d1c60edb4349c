{#
    An entity's line in the dynamic memory text: a relation as 日期：描述 (the day it was
    last updated), an attribute as its description; `kind_order` gives the order the kinds
    are read in (attributes of the player first). One rule for the recall's text
    (memory_prompt_texts) and the turn's after a prompt budget's cuts.
#}
{% macro memory_entity_line(kind, day_text, description) -%}
    case
        when {{ kind }} in ('与主体和客体的关系', '与其它实体的关系')
            then {{ day_text }} || '：' || {{ description }}
        else {{ description }}
    end
{%- endmacro %}
