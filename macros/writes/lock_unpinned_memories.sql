{#
    Of the player's memories $ids (one table's), those still unpinned, each locked until the
    transaction ends where another process may write it (macro row_lock): cleanup archives
    only these, so a pin committed after cleanup read its candidates keeps its memory
    (PostgreSQL waits for a pin in progress, then tests the row as that pin left it). One
    player's rows ($user_id): on Citus the statement runs on that player's shard.
#}
{% macro lock_unpinned_memories(table) -%}
    select id from {{ table }}
    where
        user_id = $user_id
        and id in (select unnest(cast($ids as bigint[])))
        and not is_pinned
    {{ row_lock() }}
{%- endmacro %}
