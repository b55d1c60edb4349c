{#
    The delete of one table's rows that exist because of the saves $save_ids: what their own
    lines produced (extracted memories with their postings and vectors, extraction batches
    and the lines they sent, loop state, the write-time history). Each deleted row answers
    one row, so the caller counts what went. Entities are kept: they have no save. The lines
    and the saves themselves: macros delete_save_lines and delete_empty_saves.
#}
{% macro delete_save_rows(table) -%}
    {%- set saves = "(select unnest(cast($save_ids as bigint[])))" -%}
    {%- set events = "(select id from memory_event where save_id in " ~ saves ~ ")" -%}
    {%- set batches = (
        "(select batch_key from memory_extraction_batch where save_id in " ~ saves ~ ")"
    ) -%}
    {%- set lines = "(select id from line where save_id in " ~ saves ~ ")" -%}
    {%- set filters = {
        'memory_event_term': 'event_id in ' ~ events,
        'memory_event_embedding': 'event_id in ' ~ events,
        'memory_extracted_line': 'batch_key in ' ~ batches ~ ' or line_id in ' ~ lines,
    } -%}
    delete from {{ table }}
    where {{ filters.get(table, 'save_id in ' ~ saves) }}
    returning 1
{%- endmacro %}
