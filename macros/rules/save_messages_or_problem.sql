{#
    A save's messages, else what is wrong with its chain (the tips' rule: a tip that does not
    exist too), else that the save is missing: one statement answers all three.
#}
{% macro save_messages_or_problem() -%}
    select 'message' as row_kind, message_index, role, content from memory_messages
    union all
    select 'problem' as row_kind, null as message_index, null as role, chain_problem as content
    from int_save_history_tips
    where chain_problem is not null
    union all
    select 'missing' as row_kind, null as message_index, null as role, null as content
    where not exists (select 1 from source_save)
    order by row_kind, message_index
{%- endmacro %}
