-- The batch path's prompt pieces (demo seed). A turn replaces this model with its own, every
-- value bound.
with

pieces as (
    select * from {{ ref('demo_prompt_pieces') }}
),

final as (
    select
        turn_id,
        layer,
        item_index,
        item_rank,
        content,
        time_text,
        place,
        kind,
        day_text
    from pieces
)

select * from final
