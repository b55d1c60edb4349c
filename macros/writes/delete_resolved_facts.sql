{#
    DuckDB's write-time facts table (int_save_facts_resolved): the rows of player $user_id's
    facts heard by agent $agent_id (null: every agent) about $subject (null: every subject),
    before they are resolved again (a slot is one subject's, so a fact's subject bounds what
    its write changes); one row answered per deleted row.
#}
{% macro delete_resolved_facts() -%}
    delete from int_save_facts_resolved
    where
        user_id = $user_id
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)
        and (cast($subject as varchar) is null or subject = $subject)
    returning 1
{%- endmacro %}
