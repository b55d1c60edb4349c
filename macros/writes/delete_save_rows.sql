{#
    The delete of one table's rows that exist because of the saves $save_ids: what their own
    lines produced (extracted memories with their postings and vectors, extraction batches
    and the lines they sent, loop state, the write-time history). Each deleted row answers
    one row, so the caller counts what went. Entities are kept (they have no save), their
    mentions extracted on these saves go. The lines and the saves themselves: macros
    delete_save_lines and delete_empty_saves.
#}
{% macro delete_save_rows(table) -%}
    {%- set saves = "(select unnest(cast($save_ids as bigint[])))" -%}
    delete from {{ table }}
    where
    {%- if table in ('memory_event_term', 'memory_event_embedding', 'memory_event_line') %}
        event_id in (
            select memory_event.id
            from memory_event
            where memory_event.save_id in {{ saves }}
        )
    {%- elif table in ('memory_extracted_line', 'memory_batch_line') %}
        batch_key in (
            select memory_extraction_batch.batch_key
            from memory_extraction_batch
            where memory_extraction_batch.save_id in {{ saves }}
        )
        or line_id in (
            select line.id
            from line
            where line.save_id in {{ saves }}
        )
    {%- else %}
        save_id in {{ saves }}
    {%- endif %}
    returning 1
{%- endmacro %}
