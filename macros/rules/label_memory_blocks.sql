{#
    A character prompt template as it is when it places any of the three character memory
    blocks; else with the three appended, each under the spec's header (【记忆单元】,
    【记忆事件】, 【角色参考语料】): a dialogue example then never reads like an event.
#}
{% macro label_memory_blocks(template) -%}
    case
        when
            strpos({{ template }}, {{ memory_placeholder('character_memory_attributes') }}) > 0
            or strpos({{ template }}, {{ memory_placeholder('character_memory_event') }}) > 0
            or strpos({{ template }}, {{ memory_placeholder('character_dialogue_style') }}) > 0
            then {{ template }}
        else
            {{ template }} || chr(10) || '【记忆单元】' || chr(10)
            || {{ memory_placeholder('character_memory_attributes') }} || chr(10)
            || '【记忆事件】' || chr(10) || {{ memory_placeholder('character_memory_event') }}
            || chr(10) || '【角色参考语料】' || chr(10)
            || {{ memory_placeholder('character_dialogue_style') }}
    end
{%- endmacro %}
