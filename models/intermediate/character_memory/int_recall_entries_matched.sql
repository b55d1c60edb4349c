-- How well each entry matches the request's words: 1 a token equals a keyword, 2 an
-- association word equals a keyword, 3 a word of two or more characters appears in the content.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

words as (
    select * from {{ ref('int_recall_words_expanded') }}
),

entries as (
    select * from {{ ref('int_character_entries_unioned') }}
),

keywords as (
    select * from {{ ref('int_character_entry_keywords') }}
),

request_words as (
    select
        words.*,
        requests.character_id
    from words
    inner join requests
        on requests.request_id = words.request_id
),

keyword_hits as (
    select
        request_words.request_id,
        keywords.entry_key,
        request_words.word,
        request_words.word_order,
        case request_words.word_source when 'token' then 1 else 2 end as match_quality
    from request_words
    inner join keywords
        on
            keywords.character_id = request_words.character_id
            and keywords.keyword = request_words.word
),

content_hits as (
    select
        request_words.request_id,
        entries.entry_key,
        request_words.word,
        request_words.word_order,
        3 as match_quality
    from request_words
    inner join entries
        on
            entries.character_id = request_words.character_id
            and length(request_words.word) > 1
            and strpos(entries.content, request_words.word) > 0
),

hits as (
    select * from keyword_hits
    union all
    select * from content_hits
),

final as (
    select
        request_id,
        entry_key,
        min(match_quality) as match_quality,
        string_agg(distinct word, '、' order by word) as matched_words
    from hits
    group by request_id, entry_key
)

select * from final
