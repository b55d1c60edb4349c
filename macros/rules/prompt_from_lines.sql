{#
    The prompt a turn's kept pieces make, one row per turn: the dynamic memory text rebuilt
    from its lines (each block in its order: the timeline as given, the entities by kind then
    rank, the events by day) and the prompt's token count, each message's count summed (the
    template's text before and after the dynamic memory is one message with it when the
    template places it, else the dynamic memory is a message of its own). `lines`: a relation
    of int_prompt_lines' rows with is_over_layer (whether the line passes its layer's budget),
    the kept ones only. Also answered: piece_tokens, the lines' counts with the memory's
    headers when any memory line is there (what the budget compares with max_prompt_tokens),
    and whether any line is over its layer's budget. One rule for the budget's answer
    (memory_prompt_budget_cuts) and the count when nothing can be cut
    (memory_prompt_token_counts).
#}
{% macro prompt_from_lines(lines) -%}
    with

    messages as (
        select
            turn_id,
            is_dynamic_inline,
            template_alone,
            max_prompt_tokens,
            coalesce(bool_or(is_over_layer), false) as is_over_layer_budget,
            sum(token_count) + case
                when bool_or(not is_fixed and not is_history) then max(header_tokens) else 0
            end as piece_tokens,
            {{ dynamic_memory_text(
                "string_agg(line, chr(10) order by item_index) filter (where layer = 'timeline')",
                "string_agg(line, chr(10) order by " ~ memory_entity_kind_order('kind')
                ~ ", item_rank) filter (where layer = 'dynamic_entity')",
                "string_agg(line, chr(10) order by day_text, item_index) filter ("
                ~ "where layer = 'dynamic_event')"
            ) }} as dynamic_text,
            sum(
                case when layer in ('history', 'message') then token_count else 0 end
            ) as conversation_tokens,
            -- each text's count, as the rows counted them
            sum(case when layer = 'system' then token_count else 0 end) as template_tokens,
            max(case when layer = 'system' and item_index = 0 then line end) as before_text,
            max(case when layer = 'system' and item_index = 1 then line end) as after_text
        from {{ lines }}
        group by turn_id, is_dynamic_inline, template_alone, max_prompt_tokens
    )

    select
        turn_id,
        max_prompt_tokens,
        piece_tokens,
        is_over_layer_budget,
        dynamic_text,
        conversation_tokens + case
            when is_dynamic_inline and dynamic_text = ''
                then {{ prompt_token_count('template_alone') }}
            when is_dynamic_inline
                then {{ prompt_token_count(
                    "coalesce(before_text, '') || dynamic_text || coalesce(after_text, '')"
                ) }}
            else template_tokens + {{ prompt_token_count('dynamic_text') }}
        end as prompt_tokens
    from messages
{%- endmacro %}
