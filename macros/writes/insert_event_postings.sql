{#
    Events' postings, one row per position of the bound lists: a term and its counts, with
    its event's id and owner (the keyword index reads a player's postings without a join).
    `table`: memory_event_term, or official_event_term for official events'.
#}
{% macro insert_event_postings(table='memory_event_term') -%}
    insert into {{ table }} (
        event_id, agent_id, scope, user_id, term, description_count, keyword_count, tag_count
    )
    select
        unnest(cast($event_id as bigint[])) as event_id,
        unnest(cast($agent_id as varchar[])) as agent_id,
        unnest(cast($scope as varchar[])) as scope,
        unnest(cast($user_id as varchar[])) as user_id,
        unnest(cast($term as varchar[])) as term,
        unnest(cast($description_count as integer[])) as description_count,
        unnest(cast($keyword_count as integer[])) as keyword_count,
        unnest(cast($tag_count as integer[])) as tag_count
{%- endmacro %}
