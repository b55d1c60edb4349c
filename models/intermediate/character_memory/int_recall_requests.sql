-- The batch path's requests: the demo seed with the default limits. The Python API replaces
-- this model with its one request, every value a bound parameter.
with

requests as (
    select * from {{ ref('demo_recall_requests') }}
),

limits as (
    select * from {{ ref('recall_limits') }}
),

final as (
    select
        requests.request_id,
        requests.character_id,
        requests.text as query_text,
        {{ json_text_list('requests.tokens') }} as tokens,
        requests.context,
        requests.require_match,
        nullif(requests.user_name, '') as user_name,
        nullif(requests.char_name, '') as char_name,
        requests.template,
        1 as turn_number,
        limits.attributes_per_category,
        limits.attributes_total,
        limits.events_total,
        limits.dialogue_styles_total,
        limits.queue_turns,
        limits.queue_attribute_categories,
        limits.queue_items_per_category,
        limits.queue_events,
        limits.queue_dialogue_styles,
        limits.expand_strategy,
        limits.max_expanded_words,
        cast({{ json_text_list('limits.filter_levels') }} as integer[]) as filter_levels
    from requests
    cross join limits
)

select * from final
