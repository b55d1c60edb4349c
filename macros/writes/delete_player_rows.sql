{#
    The delete of one table's rows of the player $user_id that no save holds: what the memory
    loop and the service kept per player (batches, the lines they sent, loop state,
    maintenance runs, idempotency records, postings). A privacy purge, after the player's
    saves (macro delete_save_rows) and memories went; one row answered per deleted row.
#}
{% macro delete_player_rows(table) -%}
    delete from {{ table }}
    where user_id = $user_id
    returning 1
{%- endmacro %}
