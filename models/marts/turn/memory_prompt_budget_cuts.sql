-- One row per piece of a turn's prompt: its token count (macro prompt_token_count), whether a
-- budget cuts it, and the turn's dynamic memory text rebuilt from what is kept with its prompt
-- token count. Each memory block keeps its best-ranked items while they fit its budget (seed
-- memory_prompt_budgets); then the whole prompt keeps the template's text and the player's
-- message, the history newest first, then the memory items best rank first, while they fit the
-- turn's max_prompt_tokens: the lowest-ranked items go first, then the oldest history.
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

-- each piece as the prompt reads it; a memory line counts its newline too, and a turn's
-- three memory headers count whether shown or not, so the kept pieces' counts bound the
-- prompt's
lines as (
    select
        pieces.turn_id,
        pieces.layer,
        pieces.item_index,
        pieces.item_rank,
        pieces.kind,
        pieces.day_text,
        turns.max_prompt_tokens,
        case
            when pieces.layer in ('dynamic_event', 'timeline')
                then {{ fill_name_placeholders(
                    memory_event_line('pieces.time_text', 'pieces.place', 'pieces.content'),
                    'turns.user_name',
                    'turns.agent_name'
                ) }}
            when pieces.layer = 'dynamic_entity'
                then {{ fill_name_placeholders(
                    memory_entity_line('pieces.kind', 'left(pieces.day_text, 10)', 'pieces.content'),
                    'turns.user_name',
                    'turns.agent_name'
                ) }}
            else pieces.content
        end as line,
        pieces.layer in ('system', 'message') as is_fixed,
        pieces.layer = 'history' as is_history,
        {{ prompt_token_count(dynamic_memory_text("''", "''", "''")) }} as header_tokens
    from pieces
    inner join turns
        on turns.turn_id = pieces.turn_id
),

counted as (
    select
        lines.*,
        {{ prompt_token_count('lines.line') }}
        + case when lines.is_fixed or lines.is_history then 0 else 1 end as token_count,
        budgets.max_tokens as layer_budget
    from lines
    left join budgets
        on budgets.layer = lines.layer
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
    from counted
),

prompt_budgeted as (
    select
        *,
        -- the memory's headers count once any memory item is kept
        sum(case when is_over_layer then 0 else token_count end) over (
            partition by turn_id
            order by is_fixed desc, is_history desc, item_rank, layer, item_index
            rows between unbounded preceding and current row
        ) + case when is_fixed or is_history then 0 else header_tokens end
        > coalesce(max_prompt_tokens, 2147483647) as is_over_prompt
    from layer_budgeted
),

cut as (
    select
        *,
        not is_fixed and (is_over_layer or is_over_prompt) as is_cut
    from prompt_budgeted
),

dynamic_blocks as (
    select
        turn_id,
        string_agg(line, chr(10) order by item_index) filter (
            where layer = 'timeline'
        ) as timeline_text,
        string_agg(
            line,
            chr(10)
            order by {{ memory_entity_kind_order('kind') }}, item_rank
        ) filter (where layer = 'dynamic_entity') as entity_text,
        string_agg(line, chr(10) order by day_text, item_index) filter (
            where layer = 'dynamic_event'
        ) as event_text
    from cut
    where not is_cut
    group by turn_id
),

dynamic_texts as (
    select
        turns.turn_id,
        turns.is_dynamic_inline,
        turns.template_alone,
        {{ dynamic_memory_text(
            'dynamic_blocks.timeline_text',
            'dynamic_blocks.entity_text',
            'dynamic_blocks.event_text'
        ) }} as dynamic_text
    from turns
    left join dynamic_blocks
        on dynamic_blocks.turn_id = turns.turn_id
),

-- the prompt's count: each message's, summed (the template's text before and after the
-- dynamic memory is one message with it when the template places it, else the dynamic memory
-- is a message of its own)
message_counts as (
    select
        turn_id,
        sum(
            case when layer in ('history', 'message') and not is_cut then token_count else 0 end
        ) as conversation_tokens,
        max(case when layer = 'system' and item_index = 0 then line end) as before_text,
        max(case when layer = 'system' and item_index = 1 then line end) as after_text
    from cut
    group by turn_id
),

prompt_counts as (
    select
        message_counts.turn_id,
        dynamic_texts.dynamic_text,
        message_counts.conversation_tokens + case
            when dynamic_texts.is_dynamic_inline and dynamic_texts.dynamic_text = ''
                then {{ prompt_token_count('dynamic_texts.template_alone') }}
            when dynamic_texts.is_dynamic_inline
                then {{ prompt_token_count(
                    "coalesce(message_counts.before_text, '') || dynamic_texts.dynamic_text "
                    ~ "|| coalesce(message_counts.after_text, '')"
                ) }}
            else
                {{ prompt_token_count('message_counts.before_text') }}
                + {{ prompt_token_count('message_counts.after_text') }}
                + {{ prompt_token_count('dynamic_texts.dynamic_text') }}
        end as prompt_tokens
    from message_counts
    inner join dynamic_texts
        on dynamic_texts.turn_id = message_counts.turn_id
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
        prompt_counts.dynamic_text,
        prompt_counts.prompt_tokens
    from cut
    inner join prompt_counts
        on prompt_counts.turn_id = cut.turn_id
)

select * from final
