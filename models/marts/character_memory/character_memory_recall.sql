-- One row per (recall request, entry of its character): whether the entry is in the prompt and
-- why, or why not. The Python API returns these rows as `explain` (only when asked: every
-- entry of the character is a row).
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

ranked as (
    select * from {{ ref('int_recall_entries_ranked') }}
),

matched as (
    select * from {{ ref('int_recall_entries_matched') }}
),

queue as (
    select * from {{ ref('int_recall_queue_updated') }}
),

shown as (
    select * from {{ ref('int_recall_entries_shown') }}
),

joined as (
    select
        requests.request_id,
        entries.entry_key,
        entries.entry_kind,
        entries.group_name,
        entries.content,
        case
            when shown.entry_key is not null then 'shown'
            when ranked.is_unlocked = false then 'locked'
            when queue.entry_key is not null then 'over the limit'
            else 'not relevant'
        end as status,
        ranked.failed_condition,
        case matched.match_quality
            when 1 then 'keyword'
            when 2 then 'associated keyword'
            when 3 then 'content'
        end as match_kind,
        matched.matched_words,
        coalesce(matched.matches, {{ empty_list_of_objects() }}) as matches,
        not coalesce(matched.is_relevant, true) as is_secondary_failed,
        matched.secondary_words,
        entries.secondary_logic,
        entries.is_constant,
        entries.strength,
        matched.match_quality,
        ranked.recall_rank,
        shown.display_rank,
        queue.recalled_turn,
        -- the turns it stays queued from this one on: the entry's own sticky_turns where it
        -- has one, else the queue's (the rule of int_recall_queue_updated)
        coalesce(ranked.sticky_turns, requests.queue_turns)
        - (requests.turn_number - queue.recalled_turn) as sticky_turns_left,
        coalesce(ranked.is_unlocked, true) as is_unlocked,
        coalesce(ranked.is_recalled, false) as is_recalled,
        queue.entry_key is not null and not coalesce(ranked.is_recalled, false)
            as is_carried_over,
        shown.entry_key is not null as is_shown,
        array_to_string({{ json_text_list('entries.keywords') }}, '、') as keywords,
        array_to_string({{ json_text_list('entries.secondary_keywords') }}, '、')
            as secondary_keywords
    from requests
    inner join entries
        on entries.character_id = requests.character_id
    left join ranked
        on ranked.request_id = requests.request_id and ranked.entry_key = entries.entry_key
    left join matched
        on matched.request_id = requests.request_id and matched.entry_key = entries.entry_key
    left join queue
        on queue.request_id = requests.request_id and queue.entry_key = entries.entry_key
    left join shown
        on shown.request_id = requests.request_id and shown.entry_key = entries.entry_key
),

-- every column of joined but the keywords (named: PostgreSQL has no `* exclude`)
final as (
    select
        request_id,
        entry_key,
        entry_kind,
        group_name,
        content,
        status,
        failed_condition,
        match_kind,
        matched_words,
        matches,
        strength,
        match_quality,
        recall_rank,
        display_rank,
        recalled_turn,
        sticky_turns_left,
        is_unlocked,
        is_recalled,
        is_carried_over,
        is_shown,
        case status
            when 'shown'
                then
                    case
                        when is_carried_over
                            then 'recalled at turn ' || recalled_turn || ', still queued'
                        when matched_words is not null and not is_secondary_failed
                            then 'matched ' || matched_words
                        when is_constant then 'constant: recalled whenever it is unlocked'
                        else 'recalled without a match: the request does not require one'
                    end
            when 'locked' then 'locked: ' || failed_condition
            when 'over the limit'
                then 'unlocked and relevant, but outranked past its limit'
            else
                case
                    when is_secondary_failed
                        then
                            'matched ' || matched_words || ', but its secondary keywords ('
                            || secondary_keywords || ') fail ' || secondary_logic || ': '
                            || coalesce(secondary_words, 'none') || ' in the text'
                    else
                        'none of its keywords (' || coalesce(keywords, '') || ') is in the '
                        || 'text, nor a word of the text in its content'
                end
        end as reason
    from joined
)

select * from final
