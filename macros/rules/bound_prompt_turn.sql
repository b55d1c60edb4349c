{#
    A turn's names and bounds, standing in for int_prompt_turns: turn 1, as the pieces of
    bound_prompt_pieces.
#}
{% macro bound_prompt_turn() -%}
    select
        1 as turn_id,
        cast($user_name as varchar) as user_name,
        cast($agent_name as varchar) as agent_name,
        cast($max_prompt_tokens as integer) as max_prompt_tokens,
        cast($is_dynamic_inline as boolean) as is_dynamic_inline,
        cast($template_alone as varchar) as template_alone
{%- endmacro %}
