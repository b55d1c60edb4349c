-- One row per piece of a turn's prompt as the prompt reads it, counted once (macro
-- prompt_token_count): a memory line counts its line break too, so the kept pieces' counts
-- bound the prompt's. Both the budget's cuts (memory_prompt_budget_cuts) and the count when
-- nothing can be cut (memory_prompt_token_counts) read these rows.
with

turns as (
    select * from {{ ref('int_prompt_turns') }}
),

pieces as (
    select * from {{ ref('int_prompt_pieces') }}
),

budgets as (
    select * from {{ ref('memory_prompt_budgets') }}
),

lines as (
    select
        pieces.turn_id,
        pieces.layer,
        pieces.item_index,
        pieces.item_rank,
        pieces.kind,
        pieces.day_text,
        turns.template_alone,
        turns.max_prompt_tokens,
        case
            when pieces.layer in ('dynamic_event', 'timeline', 'dynamic_entity')
                then {{ fill_name_placeholders(
                    "case when pieces.layer = 'dynamic_entity' then "
                    ~ memory_entity_line('pieces.kind', 'left(pieces.day_text, 10)', 'pieces.content')
                    ~ " else "
                    ~ memory_event_line('pieces.time_text', 'pieces.place', 'pieces.content')
                    ~ " end",
                    'turns.user_name',
                    'turns.agent_name'
                ) }}
            else pieces.content
        end as line,
        pieces.layer in ('system', 'message') as is_fixed,
        pieces.layer = 'history' as is_history,
        turns.is_dynamic_inline
    from pieces
    inner join turns
        on turns.turn_id = pieces.turn_id
),

final as (
    select
        lines.turn_id,
        lines.layer,
        lines.item_index,
        lines.item_rank,
        lines.kind,
        lines.day_text,
        lines.line,
        lines.template_alone,
        {{ prompt_token_count('lines.line') }}
        + case when lines.is_fixed or lines.is_history then 0 else 1 end as token_count,
        budgets.max_tokens as layer_budget,
        -- the dynamic memory's three headers: counted once any memory item is kept
        {{ prompt_token_count(dynamic_memory_text("''", "''", "''")) }} as header_tokens,
        lines.max_prompt_tokens,
        lines.is_fixed,
        lines.is_history,
        lines.is_dynamic_inline
    from lines
    left join budgets
        on budgets.layer = lines.layer
)

select * from final
