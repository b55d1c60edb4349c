{#
    A turn's prompt pieces, standing in for int_prompt_pieces: each column bound as one list
    with a position per piece (rolemem.turn.budget, the turn's own values), all of turn 1.
#}
{% macro bound_prompt_pieces() -%}
    select
        1 as turn_id,
        unnest(cast($layer as varchar[])) as layer,
        unnest(cast($item_index as bigint[])) as item_index,
        unnest(cast($item_rank as integer[])) as item_rank,
        unnest(cast($content as varchar[])) as content,
        unnest(cast($time_text as varchar[])) as time_text,
        unnest(cast($place as varchar[])) as place,
        unnest(cast($kind as varchar[])) as kind,
        unnest(cast($day_text as varchar[])) as day_text
{%- endmacro %}
