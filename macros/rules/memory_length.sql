{#
    The longest a memory's text may be (characters): an event's description and insight, an
    entity's description, a fact's value. The one home of the limit: the merge keeps an
    entity's description within it (merge_memory_entity), and the memory contract
    (rolemem.dynamic_memory.contract, the service's request schemas) reads it from here.
#}
{% macro memory_length() -%}
    2000
{%- endmacro %}
