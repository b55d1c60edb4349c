{#
    A page of the player $user_id's saves, oldest first ($limit from $offset), each with how
    many saves the player has; a save being erased is gone already.
#}
{% macro player_saves_page() -%}
    select
        id as save_id,
        name,
        last_message_id as tip_line_id,
        forked_from_line_id,
        count(*) over () as total
    from save
    where user_id = $user_id and erasing is not true
    order by id
    limit $limit offset $offset
{%- endmacro %}
