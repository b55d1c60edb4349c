-- Per observed save x character: every line of its current chain after the opening (turn > 0)
-- and whether extraction still has to take it. A line is covered once it was sent for the
-- character, unless a memory citing it was cut off this chain (its last line is not on it: a
-- reload, a fork or a regenerated reply left it on another branch) while no memory shown
-- here cites it and no replacement batch shown here sent it again: such a line is replayed,
-- as a replacement batch. A line that yielded no memory, or whose memories all stay shown,
-- is never sent again; a deleted memory cites nothing (it never comes back).
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

extracted_lines as (
    select * from {{ ref('stg_app__memory_extracted_lines') }}
),

citations as (
    select * from {{ ref('int_loop_line_citations') }}
),

hidden_batches as (
    select * from {{ ref('int_loop_hidden_batches') }}
),

batch_lines as (
    select * from {{ ref('stg_app__memory_batch_lines') }}
),

batches as (
    select * from {{ ref('stg_app__memory_extraction_batches') }}
),

chain_lines as (
    select
        observations.save_id,
        observations.target_key,
        turns.line_id,
        turns.line_position,
        turns.turn_number
    from observations
    inner join turns
        on turns.save_id = observations.save_id
    where turns.turn_number > 0
),

cited as (
    select
        save_id,
        target_key,
        line_id,
        bool_or(is_shown) as is_cited_shown,
        bool_or(not is_last_line_on_chain) as is_cited_cut
    from citations
    group by save_id, target_key, line_id
),

-- lines a replacement batch shown on this chain sent again (cited or not)
replayed as (
    select distinct
        chain_lines.save_id,
        chain_lines.target_key,
        chain_lines.line_id
    from chain_lines
    inner join batch_lines
        on
            batch_lines.line_id = chain_lines.line_id
            and batch_lines.target_key = chain_lines.target_key
            and batch_lines.relation = 'sent'
    inner join batches
        on batches.batch_key = batch_lines.batch_key
    inner join turns as on_chain
        on on_chain.save_id = chain_lines.save_id and on_chain.line_id = batches.last_line_id
    left join hidden_batches
        on
            hidden_batches.save_id = chain_lines.save_id
            and hidden_batches.batch_key = batch_lines.batch_key
    where hidden_batches.batch_key is null
),

marked as (
    select
        chain_lines.save_id,
        chain_lines.target_key,
        chain_lines.line_id,
        chain_lines.line_position,
        chain_lines.turn_number,
        extracted_lines.line_id is not null as is_extracted,
        coalesce(cited.is_cited_cut and not cited.is_cited_shown, false)
        and replayed.line_id is null as is_left_uncited
    from chain_lines
    left join extracted_lines
        on
            extracted_lines.line_id = chain_lines.line_id
            and extracted_lines.target_key = chain_lines.target_key
    left join cited
        on
            cited.save_id = chain_lines.save_id
            and cited.target_key = chain_lines.target_key
            and cited.line_id = chain_lines.line_id
    left join replayed
        on
            replayed.save_id = chain_lines.save_id
            and replayed.target_key = chain_lines.target_key
            and replayed.line_id = chain_lines.line_id
),

final as (
    select
        save_id,
        target_key,
        line_id,
        line_position,
        turn_number,
        is_extracted,
        is_extracted and is_left_uncited as is_replay,
        is_extracted and not is_left_uncited as is_covered
    from marked
)

select * from final
