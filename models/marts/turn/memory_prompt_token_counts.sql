-- One row per turn: its prompt's token count and dynamic memory text with nothing cut (macro
-- prompt_from_lines), and whether a budget could cut anything (needs_cuts): a turn runs
-- memory_prompt_budget_cuts only when this says it must (it asks this rule as
-- rolemem.turn.token_counts writes it out in Python). Nothing is cut when
-- no layer's pieces together pass its budget and every piece's count with the memory's
-- headers does not pass max_prompt_tokens: the budgets' running sums never pass those totals.
with

lines as (
    select * from {{ ref('int_prompt_lines') }}
),

layer_totals as (
    select
        *,
        sum(token_count) over (partition by turn_id, layer) > layer_budget as is_over_layer
    from lines
),

prompts as (
    {{ prompt_from_lines('layer_totals') }}
),

final as (
    select
        turn_id,
        dynamic_text,
        prompt_tokens,
        piece_tokens,
        is_over_layer_budget,
        is_over_layer_budget
        or piece_tokens > coalesce(max_prompt_tokens, 2147483647) as needs_cuts
    from prompts
)

select * from final
