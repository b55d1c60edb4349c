{#
    The player $user_id's facts heard by the agent $agent_id (null: every agent) about
    $subject (null: everyone): what a fact write re-resolves.
#}
{% macro heard_player_facts() -%}
    select * from memory_fact
    where
        user_id = $user_id
        and (cast($agent_id as varchar) is null or agent_id = $agent_id)
        and (cast($subject as varchar) is null or subject = $subject)
{%- endmacro %}
