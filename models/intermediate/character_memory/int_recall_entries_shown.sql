-- What the prompt shows: the updated queue, ranked like one recall (strength, match quality,
-- designer order), capped per attribute category first and then per kind in total.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

queue as (
    select * from {{ ref('int_recall_queue_updated') }}
),

ranked as (
    select * from {{ ref('int_recall_entries_ranked') }}
),

candidates as (
    select
        queue.request_id,
        queue.entry_key,
        queue.recalled_turn,
        ranked.entry_kind,
        ranked.group_name,
        ranked.group_order,
        ranked.event_date,
        ranked.content,
        row_number() over (
            partition by queue.request_id, ranked.entry_kind, ranked.group_name
            order by ranked.strength desc nulls last, queue.match_quality, ranked.entry_ordinal
        ) as rank_in_group,
        ranked.strength,
        queue.match_quality,
        ranked.entry_ordinal
    from queue
    inner join ranked
        on ranked.request_id = queue.request_id and ranked.entry_key = queue.entry_key
),

within_group_cap as (
    select candidates.*
    from candidates
    inner join requests
        on requests.request_id = candidates.request_id
    where
        candidates.entry_kind <> 'attribute'
        or candidates.rank_in_group <= requests.attributes_per_category
),

ranked_in_kind as (
    select
        *,
        row_number() over (
            partition by request_id, entry_kind
            order by strength desc nulls last, match_quality, entry_ordinal
        ) as display_rank
    from within_group_cap
),

final as (
    select ranked_in_kind.*
    from ranked_in_kind
    inner join requests
        on requests.request_id = ranked_in_kind.request_id
    where
        ranked_in_kind.display_rank <= case ranked_in_kind.entry_kind
            when 'attribute' then requests.attributes_total
            when 'event' then requests.events_total
            else requests.dialogue_styles_total
        end
)

select * from final
