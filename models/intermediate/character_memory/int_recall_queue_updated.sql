-- The sticky queue after this turn: this turn's recalls, plus earlier recalls younger than
-- queue_turns turns (the entry's own sticky_turns where it has one) that are still unlocked
-- (a re-recall refreshes an entry, so duplicates merge). When a queue is full the oldest go:
-- recent attribute categories, items per category, events and dialogue styles each have
-- their own length.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

ranked as (
    select * from {{ ref('int_recall_entries_ranked') }}
),

queue as (
    select * from {{ ref('int_recall_queue_items') }}
),

fresh as (
    select
        ranked.request_id,
        ranked.entry_key,
        requests.turn_number as recalled_turn,
        ranked.match_quality
    from ranked
    inner join requests
        on requests.request_id = ranked.request_id
    where ranked.is_recalled
),

carried as (
    select
        queue.request_id,
        queue.entry_key,
        queue.recalled_turn,
        queue.match_quality
    from queue
    inner join requests
        on requests.request_id = queue.request_id
    inner join ranked
        on ranked.request_id = queue.request_id and ranked.entry_key = queue.entry_key
    where
        requests.turn_number - queue.recalled_turn
        < coalesce(ranked.sticky_turns, requests.queue_turns)
        and ranked.is_unlocked
        and not ranked.is_recalled
),

pool as (
    select
        items.*,
        ranked.entry_kind,
        ranked.group_name,
        ranked.group_order,
        ranked.strength,
        ranked.entry_ordinal
    from (
        select * from fresh
        union all
        select * from carried
    ) as items
    inner join ranked
        on ranked.request_id = items.request_id and ranked.entry_key = items.entry_key
),

aged as (
    select
        *,
        row_number() over (
            partition by
                request_id, entry_kind, case when entry_kind = 'attribute' then group_name end
            order by recalled_turn desc, strength desc nulls last, match_quality, entry_ordinal
        ) as recency_rank,
        max(recalled_turn) over (partition by request_id, entry_kind, group_name)
            as group_recalled_turn,
        max(strength) over (partition by request_id, entry_kind, group_name)
            as group_strength
    from pool
),

group_ranked as (
    select
        *,
        dense_rank() over (
            partition by request_id, entry_kind
            -- newest first; among categories recalled the same turn, the strongest (强度优先)
            order by
                group_recalled_turn desc, group_strength desc nulls last, group_order,
                group_name
        ) as group_recency_rank
    from aged
),

final as (
    select
        group_ranked.request_id,
        group_ranked.entry_key,
        group_ranked.recalled_turn,
        group_ranked.match_quality
    from group_ranked
    inner join requests
        on requests.request_id = group_ranked.request_id
    where
        case group_ranked.entry_kind
            when 'attribute'
                then
                    group_ranked.recency_rank <= requests.queue_items_per_category
                    and group_ranked.group_recency_rank <= requests.queue_attribute_categories
            when 'event' then group_ranked.recency_rank <= requests.queue_events
            else group_ranked.recency_rank <= requests.queue_dialogue_styles
        end
)

select * from final
