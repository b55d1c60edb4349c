-- How well each entry matches the request: 1 a designer keyword appears in the player's text
-- (as a word, or inside a longer one: 酒 in 再来一壶酒, as lorebook tools match Chinese), 2 an
-- association word equals a keyword, 3 a word of two or more characters appears in the
-- content. The text is read as its windows up to the longest keyword's length, looked up in
-- the keyword index: the cost follows the text, not the size of the config. Keywords that are
-- the player's or the character's name never match (names are not recall words). A matched
-- entry with secondary keywords is relevant only when they pass its logic over the text
-- (SillyTavern's selective logic: AND_ANY one of them is in it, NOT_ALL not all, NOT_ANY
-- none, AND_ALL all); the others stay, not relevant, so explain can say why. A caller whose
-- config has no secondary keywords plans none of that (each operator is planned on every
-- call): var recall_secondary_keywords false, every match is relevant.
{%- set secondary = var('recall_secondary_keywords', true) %}
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

longest_keywords as (
    select
        character_id,
        longest_keyword_length as longest
    from {{ ref('int_character_keyword_lengths') }}
),

-- each start position of the text, then each window from it up to the longest keyword's
-- length (the series in the select list: macro series_values)
text_starts as (
    select
        requests.request_id,
        requests.character_id,
        requests.tokens,
        requests.user_name,
        requests.char_name,
        requests.query_text,
        longest_keywords.longest,
        {{ series_values('1', 'length(requests.query_text)') }} as start_position
    from requests
    inner join longest_keywords
        on longest_keywords.character_id = requests.character_id
),

text_window_lengths as (
    select
        *,
        -- integer bounds: PostgreSQL's substring takes integer lengths, not bigint
        {{ series_values(
            '1',
            'least(coalesce(cast(longest as integer), 0), length(query_text) - start_position + 1)'
        ) }} as window_length
    from text_starts
),

text_windows as (
    select
        request_id,
        character_id,
        tokens,
        user_name,
        char_name,
        start_position,
        lower(substr(query_text, start_position, window_length)) as folded_window
    from text_window_lengths
),

text_hits as (
    select
        text_windows.request_id,
        keywords.entry_key,
        keywords.keyword as word,
        {% if secondary %}keywords.is_secondary,{% else %}false as is_secondary,{% endif %}
        min(text_windows.start_position) as word_order,
        1 as match_quality,
        case
            when {{ list_has('text_windows.tokens', 'keywords.keyword') }} then 'keyword'
            else 'keyword inside a word'
        end as match_how,
        min(text_windows.start_position) as text_position
    from text_windows
    inner join keywords
        on
            keywords.character_id = text_windows.character_id
            and keywords.folded_keyword = text_windows.folded_window
    where
        keywords.folded_keyword is distinct from lower(text_windows.user_name)
        and keywords.folded_keyword is distinct from lower(text_windows.char_name)
        and {{ in_few_rows('keywords.folded_keyword', 'select folded_window from text_windows') }}
    group by
        text_windows.request_id,
        keywords.entry_key,
        keywords.keyword,
        {% if secondary %}keywords.is_secondary,{% endif %}
        match_how
),

{% if secondary %}
    -- the secondary keywords in the text, per entry
    secondary_hits as (
        select
            request_id,
            entry_key,
            count(distinct word) as secondary_hit_count,
            string_agg(distinct word, '、' order by word) as secondary_words
        from text_hits
        where is_secondary
        group by request_id, entry_key
    ),
{% endif %}

association_hits as (
    select
        request_words.request_id,
        keywords.entry_key,
        request_words.word,
        request_words.word_order,
        2 as match_quality,
        'associated keyword' as match_how,
        cast(null as bigint) as text_position
    from request_words
    inner join keywords
        on
            keywords.character_id = request_words.character_id
            and keywords.keyword = request_words.word
    where request_words.word_source = 'expanded' and not keywords.is_secondary
),

content_hits as (
    select
        request_words.request_id,
        entries.entry_key,
        request_words.word,
        request_words.word_order,
        3 as match_quality,
        'content' as match_how,
        cast(null as bigint) as text_position
    from request_words
    inner join entries
        on
            entries.character_id = request_words.character_id
            and length(request_words.word) > 1
            and strpos(entries.content, request_words.word) > 0
),

hits as (
    select
        request_id,
        entry_key,
        word,
        word_order,
        match_quality,
        match_how,
        text_position
    from text_hits
    where not is_secondary
    union all
    select * from association_hits
    union all
    select * from content_hits
),

matched as (
    select
        request_id,
        entry_key,
        min(match_quality) as match_quality,
        string_agg(distinct word, '、' order by word) as matched_words,
        {{ list_of_objects(
            [('word', 'word'), ('how', 'match_how'), ('text_position', 'text_position')],
            'match_quality, word_order, word'
        ) }} as matches
    from hits
    group by request_id, entry_key
),

{% if secondary %}
    final as (
        select
            matched.*,
            secondary_hits.secondary_words,
            case
                when entries.secondary_keyword_count = 0 then true
                when entries.secondary_logic = 'NOT_ALL'
                    then
                        coalesce(secondary_hits.secondary_hit_count, 0)
                        < entries.secondary_keyword_count
                when entries.secondary_logic = 'NOT_ANY' then secondary_hits.entry_key is null
                when entries.secondary_logic = 'AND_ALL'
                    then
                        coalesce(secondary_hits.secondary_hit_count, 0)
                        = entries.secondary_keyword_count
                else secondary_hits.entry_key is not null
            end as is_relevant
        from matched
        inner join entries
            on entries.entry_key = matched.entry_key
        left join secondary_hits
            on
                secondary_hits.request_id = matched.request_id
                and secondary_hits.entry_key = matched.entry_key
    )
{% else %}
    final as (
        select
            *,
            cast(null as varchar) as secondary_words,
            true as is_relevant
        from matched
    )
{% endif %}

select * from final
