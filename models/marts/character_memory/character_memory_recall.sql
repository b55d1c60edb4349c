-- One row per (recall request, entry of its character): why the entry is or is not in the
-- prompt. The Python API returns these rows as `explain`.
with

ranked as (
    select * from {{ ref('int_recall_entries_ranked') }}
),

queue as (
    select * from {{ ref('int_recall_queue_updated') }}
),

shown as (
    select * from {{ ref('int_recall_entries_shown') }}
),

final as (
    select
        ranked.request_id,
        ranked.entry_key,
        ranked.entry_kind,
        ranked.group_name,
        ranked.content,
        case
            when shown.entry_key is not null then 'shown'
            when not ranked.is_unlocked then 'locked'
            when queue.entry_key is not null then 'over the limit'
            else 'not relevant'
        end as status,
        ranked.failed_condition,
        case ranked.match_quality
            when 1 then 'keyword'
            when 2 then 'associated keyword'
            when 3 then 'content'
        end as match_kind,
        ranked.matched_words,
        ranked.strength,
        ranked.match_quality,
        ranked.recall_rank,
        shown.display_rank,
        queue.recalled_turn,
        ranked.is_unlocked,
        ranked.is_recalled,
        queue.entry_key is not null and not ranked.is_recalled as is_carried_over,
        shown.entry_key is not null as is_shown
    from ranked
    left join queue
        on queue.request_id = ranked.request_id and queue.entry_key = ranked.entry_key
    left join shown
        on shown.request_id = ranked.request_id and shown.entry_key = ranked.entry_key
)

select * from final
