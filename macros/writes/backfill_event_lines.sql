{#
    What a store written before memories kept their lines lacks, recorded once per store
    (a migration, after backfill_extracted_lines). `step` lines: each extracted line gets its
    batch's last line; `step` events: each extracted event without lines gets its batch's
    lines (what it came from as far as the store knows), with its batch and last line. One row
    answered per row written.
#}
{% macro backfill_event_lines(step) -%}
    {%- if step == 'lines' -%}
        update memory_extracted_line
        set batch_last_line_id = batches.last_line_id
        from memory_extraction_batch as batches
        where
            batches.batch_key = memory_extracted_line.batch_key
            and batches.user_id = memory_extracted_line.user_id
            and memory_extracted_line.batch_last_line_id is null
        returning 1
    {%- elif step == 'events' -%}
        insert into memory_event_line (
            event_id, line_id, user_id, target_key, batch_key, last_line_id
        )
        select
            events.id as event_id,
            sent.line_id,
            sent.user_id,
            sent.target_key,
            events.batch_key,
            events.last_line_id
        from memory_event as events
        inner join memory_extracted_line as sent
            on sent.batch_key = events.batch_key and sent.user_id = events.user_id
        where not exists (
            select 1
            from memory_event_line as recorded
            where recorded.event_id = events.id
        )
        returning 1
    {%- else -%}
        {{ exceptions.raise_compiler_error('backfill_event_lines: no step ' ~ step) }}
    {%- endif %}
{%- endmacro %}
