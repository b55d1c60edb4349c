-- Every entry of the request's character with its verdict, match and rank. Recalled =
-- unlocked and relevant (a match that its secondary keywords let count), or unlocked and
-- constant, or unlocked when the request does not require a match. Rank within its kind:
-- strength first, then match quality, then designer order.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

evaluated as (
    select * from {{ ref('int_recall_entries_evaluated') }}
),

matched as (
    select * from {{ ref('int_recall_entries_matched') }}
),

joined as (
    select
        evaluated.request_id,
        entries.entry_key,
        entries.entry_kind,
        entries.group_name,
        entries.group_order,
        entries.entry_ordinal,
        entries.event_date,
        entries.content,
        entries.strength,
        entries.is_constant,
        entries.sticky_turns,
        evaluated.is_unlocked,
        evaluated.failed_condition,
        -- a match its secondary keywords do not let count is no match
        case when matched.is_relevant then matched.match_quality end as match_quality,
        case when matched.is_relevant then matched.matched_words end as matched_words,
        evaluated.is_unlocked
        and (
            coalesce(matched.is_relevant, false)
            or entries.is_constant
            or not requests.require_match
        ) as is_recalled
    from evaluated
    inner join entries
        on entries.entry_key = evaluated.entry_key
    inner join requests
        on requests.request_id = evaluated.request_id
    left join matched
        on
            matched.request_id = evaluated.request_id
            and matched.entry_key = evaluated.entry_key
),

final as (
    select
        *,
        case
            when is_recalled
                then
                    row_number() over (
                        partition by request_id, entry_kind
                        order by
                            is_recalled desc,
                            strength desc nulls last,
                            coalesce(match_quality, 4),
                            entry_ordinal
                    )
        end as recall_rank
    from joined
)

select * from final
