-- The batch path's turns (demo seed). A turn replaces this model with its own, every value
-- bound.
with

turns as (
    select * from {{ ref('demo_prompt_turns') }}
),

final as (
    select
        turn_id,
        user_name,
        agent_name,
        max_prompt_tokens,
        is_dynamic_inline,
        -- the demo templates place the dynamic memory, never empty
        cast(null as varchar) as template_alone
    from turns
)

select * from final
