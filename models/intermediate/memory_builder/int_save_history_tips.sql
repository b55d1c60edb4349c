-- One row per save: the tip (last_message_id) and the player's name its history tables were
-- built for, what is wrong with its chain if anything, and the chain's length. The Python path
-- compares both with the save's current ones to tell when a save's write-time rows are stale
-- (the stored messages name the player by the save's user_name).
with

saves as (
    select * from {{ ref('stg_app__saves') }}
),

problems as (
    select * from {{ ref('int_save_chain_problems') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

lines as (
    select * from {{ ref('stg_app__lines') }}
),

problem_texts as (
    select
        save_id,
        string_agg(chain_problem, '; ' order by chain_problem) as chain_problem
    from problems
    group by save_id
),

lengths as (
    select
        save_id,
        count(*) as line_count
    from chains
    group by save_id
),

final as (
    select
        saves.save_id,
        saves.last_message_id as tip_line_id,
        coalesce(
            problem_texts.chain_problem,
            case
                when saves.last_message_id is not null and tips.line_id is null
                    then
                        'save ' || saves.save_id || ': last_message_id '
                        || saves.last_message_id || ' does not exist'
            end
        ) as chain_problem,
        coalesce(lengths.line_count, 0) as line_count,
        saves.user_name
    from saves
    left join problem_texts
        on problem_texts.save_id = saves.save_id
    left join lengths
        on lengths.save_id = saves.save_id
    left join lines as tips
        on tips.line_id = saves.last_message_id
)

select * from final
