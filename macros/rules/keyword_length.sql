{#
    The longest a memory's keyword may be (characters): an event's tag, an entity's keyword.
    The one home of the limit: the memory contract (rolemem.dynamic_memory.contract) and the
    migration that brings older rows inside it (rolemem.schema.limits) read it from here.
#}
{% macro keyword_length() -%}
    64
{%- endmacro %}
