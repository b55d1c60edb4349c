{#
    The indexes a turn's reads need on PostgreSQL, statements separated by semicolons (run by
    schema.store there only: DuckDB finds the same rows by its row groups' min/max, and an
    index would only cost its writes): `tables` 'app' for the game's, 'memory' for the player
    memories'.
#}
{% macro postgres_indexes(tables) -%}
{%- if tables == 'app' %}
-- every turn reads a save's lines by save_id: without an index, a scan of every save's lines
-- (3 s a call at a million lines, 5 ms with it)
create index if not exists ix_line_save_id on line (save_id);
-- the lines the game wrote without their player: an append fills its save's (macro
-- move_save_tip) by this index, usually empty, not by reading all of the save's lines
create index if not exists ix_line_unowned on line (save_id) where user_id is null
{%- else %}
-- a player's postings of the turn's words, read from the index alone (the columns recall
-- reads included). The term compares in collation C: the words it is matched with come from
-- the config tables, copied in C (PostgresEngine.replace_tables), and an index of another
-- collation serves no comparison in C (the first index was never used for words: it read
-- all of a player's postings)
drop index if exists ix_memory_event_term_owner;
create index if not exists ix_memory_event_term_owner_word on memory_event_term
(agent_id, scope, user_id, term collate "C")
include (event_id, description_count, keyword_count, tag_count);
-- a player's newest events first: the overview timeline reads timeline_size of them
create index if not exists ix_memory_event_owner_time on memory_event
(agent_id, scope, user_id, created_at desc nulls last, id desc nulls last);
-- the agent's official postings of the turn's words, and its newest official events
create index if not exists ix_official_event_term_agent_word on official_event_term
(agent_id, term collate "C")
include (event_id, description_count, keyword_count, tag_count, scope, user_id);
create index if not exists ix_official_event_agent_time on official_event
(agent_id, created_at desc nulls last, id desc nulls last);
-- the vectors without a player (written before the column): the migration filling them
-- reads this index, not every vector
create index if not exists ix_memory_event_embedding_unowned on memory_event_embedding
(event_id) where user_id is null
{%- endif %}
{%- endmacro %}
