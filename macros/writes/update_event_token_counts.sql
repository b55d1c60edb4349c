{#
    Events' token counts (their postings' counts summed, recomputed by a migration), one per
    position of the bound lists $ids and $lengths. `table`: memory_event, or official_event.
#}
{% macro update_event_token_counts(table='memory_event') -%}
    update {{ table }}
    set token_count = lengths.token_count
    from (
        select
            unnest(cast($ids as bigint[])) as id,
            unnest(cast($lengths as integer[])) as token_count
    ) as lengths
    where {{ table }}.id = lengths.id
{%- endmacro %}
