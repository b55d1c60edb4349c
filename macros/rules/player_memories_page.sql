{#
    One page of a player's live memories (mart memory_player_memories over the player's rows),
    newest first: of kind $kind (null: both), and with $q (null: any) in the description or
    equal to a tag, case aside; each with the count of all the matching rows.
#}
{% macro player_memories_page() -%}
    select
        *,
        count(*) over () as total
    from memory_player_memories
    where
        (cast($kind as varchar) is null or memory_type = $kind)
        and (
            cast($q as varchar) is null
            or strpos(lower(description), lower($q)) > 0
            or lower($q) in (select lower(word) from unnest(keywords) as words (word))
        )
    order by created_at desc, memory_type, memory_id desc
    limit $limit offset $offset
{%- endmacro %}
