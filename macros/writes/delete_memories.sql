{#
    Rows of memories $ids (an event's postings and vectors go with it, by their event key);
    one row answered per deleted row.
#}
{% macro delete_memories(table, key) -%}
    delete from {{ table }}
    where {{ key }} in (select unnest(cast($ids as bigint[])))
    returning 1
{%- endmacro %}
