{#
    An event's postings: its terms as parallel bound lists, each row with the event's owner
    (the keyword index reads a player's postings without a join). `table`: memory_event_term,
    or official_event_term for an official event's.
#}
{% macro insert_event_postings(table='memory_event_term') -%}
    insert into {{ table }} (
        event_id, agent_id, scope, user_id, term, description_count, keyword_count, tag_count
    )
    select
        cast($event_id as bigint) as event_id,
        cast($agent_id as varchar) as agent_id,
        cast($scope as varchar) as scope,
        cast($user_id as varchar) as user_id,
        unnest(cast($terms as varchar[])) as term,
        unnest(cast($description_counts as integer[])) as description_count,
        unnest(cast($keyword_counts as integer[])) as keyword_count,
        unnest(cast($tag_counts as integer[])) as tag_count
{%- endmacro %}
