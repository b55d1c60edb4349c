{#
    The longest a name may be (characters): a role's, a speaker's, a line's tags and scene, and
    a memory's place, scene, entity name and fact slot. The one home of the limit: the line's
    and the memory's contracts (rolemem.memory_builder.contract, dynamic_memory.contract) and
    the migration that brings older rows inside it (rolemem.schema.limits) read it from here.
#}
{% macro name_length() -%}
    128
{%- endmacro %}
