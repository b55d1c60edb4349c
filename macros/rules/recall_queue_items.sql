{#
    The sticky queues of a recall batch's requests as rows (model int_recall_queue_items):
    each item bound as parallel lists ($queued_request_id, $queued_keys, $queued_turns,
    $queued_qualities), flattened with its request's number.
#}
{% macro recall_queue_items() -%}
    select
        unnest(cast($queued_request_id as integer[])) as request_id,
        unnest(cast($queued_keys as varchar[])) as entry_key,
        unnest(cast($queued_turns as integer[])) as recalled_turn,
        unnest(cast($queued_qualities as integer[])) as match_quality
{%- endmacro %}
