-- One row per piece of a turn's prompt: its token count (int_prompt_lines), whether a budget
-- cuts it, and the turn's dynamic memory text rebuilt from what is kept with its prompt token
-- count (macro prompt_from_lines). Each memory block keeps its best-ranked items while they
-- fit its budget (seed memory_prompt_budgets); then the whole prompt keeps the template's text
-- and the player's message, the history newest first, then the memory items best rank first,
-- while they fit the turn's max_prompt_tokens: the lowest-ranked items go first, then the
-- oldest history.
with

lines as (
    select * from {{ ref('int_prompt_lines') }}
),

layer_budgeted as (
    select
        *,
        coalesce(
            sum(token_count) over (
                partition by turn_id, layer
                order by item_rank, item_index
                rows between unbounded preceding and current row
            ) > layer_budget,
            false
        ) as is_over_layer
    from lines
),

-- the memory's three headers count once any memory item is kept, whether shown or not, so
-- the kept pieces' counts bound the prompt's
cut as (
    select
        *,
        not is_fixed and (
            is_over_layer
            or sum(case when is_over_layer then 0 else token_count end) over (
                partition by turn_id
                order by is_fixed desc, is_history desc, item_rank, layer, item_index
                rows between unbounded preceding and current row
            ) + case when is_fixed or is_history then 0 else header_tokens end
            > coalesce(max_prompt_tokens, 2147483647)
        ) as is_cut
    from layer_budgeted
),

kept as (
    select * from cut
    where not is_cut
),

prompts as (
    {{ prompt_from_lines('kept') }}
),

final as (
    select
        cut.turn_id,
        cut.layer,
        cut.item_index,
        cut.item_rank,
        cut.token_count,
        cut.is_cut,
        case
            when cut.is_over_layer then 'over the ' || cut.layer || ' budget'
            when cut.is_cut then 'over max_prompt_tokens'
        end as cut_reason,
        prompts.dynamic_text,
        prompts.prompt_tokens
    from cut
    inner join prompts
        on prompts.turn_id = cut.turn_id
)

select * from final
