{#
    The most tags an event may hold. The one home of the limit: the memory contract
    (rolemem.dynamic_memory.contract) and the migration that brings older rows inside it
    (rolemem.schema.limits) read it from here.
#}
{% macro max_keywords() -%}
    50
{%- endmacro %}
