{#
    What a recall batch's players hold, which decides what its statement plans (so most plan
    far less): whether any player of $user_id has a fact with an agent of $agent_id, a
    replacement batch, an entity mention extracted from lines, and an entity with an agent or
    the agent an official one. Index seeks (user_id, agent_id); on Citus with the batch's one
    player $save_user_id (macro player_filter), so it runs on that shard.
#}
{% macro recall_batch_holdings() -%}
    {%- set players = "list_contains(cast($user_id as varchar[]), user_id)" -%}
    {%- set agents = "list_contains(cast($agent_id as varchar[]), agent_id)" -%}
    {%- set shard = player_filter('user_id', 'save_user_id') -%}
    select
        exists (
            select 1 from memory_fact
            where {{ players }} and {{ agents }} and {{ shard }}
        ) as has_facts,
        exists (
            select 1 from memory_batch_line
            where relation = 'replaces' and {{ players }} and {{ shard }}
        ) as has_replacements,
        exists (
            select 1 from memory_entity_mention
            where save_id is not null and {{ players }} and {{ shard }}
        ) as has_mention_lines,
        exists (
            select 1 from memory_entity
            where {{ players }} and {{ agents }} and {{ shard }}
        )
        or exists (select 1 from official_entity where {{ agents }}) as has_entities
{%- endmacro %}
