{#
    The events a batch's context texts read: the `stored` ones of its agents' timelines and
    the new ones ($new_* lists, one position per new event), numbered from $first_new_id in
    batch order (after every stored id).
#}
{% macro stored_and_new_events(stored) -%}
    select * from ({{ stored }}) as stored
    union all
    select
        cast($first_new_id as bigint)
        + generate_subscripts(cast($new_agent_id as varchar[]), 1) - 1 as event_id,
        unnest(cast($new_agent_id as varchar[])) as agent_id,
        unnest(cast($new_scope as varchar[])) as scope,
        unnest(cast($new_user_id as varchar[])) as user_id,
        unnest(cast($new_created_at as timestamp[])) as created_at,
        unnest(cast($new_description as varchar[])) as description
{%- endmacro %}
