-- What earlier turns recalled and still shows (the sticky queue). Batch requests are first
-- turns, so this is empty here; a Python session passes its queue in its place (entries of
-- its character, each once).
select
    cast(null as integer) as request_id,
    cast(null as varchar) as entry_key,
    cast(null as integer) as recalled_turn,
    cast(null as integer) as match_quality
where false
