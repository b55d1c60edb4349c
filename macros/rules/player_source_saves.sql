{#
    The saves a player's live memories were extracted on (their events' and entity mentions'),
    of the agent $agent_id (null: every agent), as one list: the saves whose chains say which
    of the player's memories are on the current branch.
#}
{% macro player_source_saves() -%}
    {%- set agent = "(cast($agent_id as varchar) is null or agent_id = $agent_id)" -%}
    select list(distinct sources.save_id)
    from (
        select save_id from memory_event
        where scope = 'user' and user_id = $user_id and {{ agent }}
        union all
        select save_id from memory_entity_mention
        where user_id = $user_id and {{ agent }}
    ) as sources
    where sources.save_id is not null
{%- endmacro %}
