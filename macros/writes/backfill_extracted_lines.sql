{#
    Record the lines of extraction batches written before lines were recorded (a batch with no
    memory_extracted_line row): every line from the batch's last line up to the root of its
    parent chain, once per character, credited to the nearest batch below it. The watermark
    then reads recorded lines only. A migration, run once per store before it is distributed
    on Citus (a walk across shards is refused there); one row answered per line recorded.
#}
{% macro backfill_extracted_lines() -%}
    {{- adapter.dispatch('backfill_extracted_lines', 'rolemem')() -}}
{%- endmacro %}

{% macro default__backfill_extracted_lines() -%}
    insert into memory_extracted_line (line_id, target_key, user_id, batch_key)
    with recursive

    unrecorded as (
        select
            batches.batch_key,
            batches.target_key,
            batches.user_id,
            batches.last_line_id
        from memory_extraction_batch as batches
        where not exists (
            select 1
            from memory_extracted_line as recorded
            where recorded.batch_key = batches.batch_key
        )
    ),

    walked as (
        select
            unrecorded.batch_key,
            unrecorded.target_key,
            unrecorded.user_id,
            line.id as line_id,
            line.parent_line_id,
            0 as depth
        from unrecorded
        inner join line
            on line.id = unrecorded.last_line_id
        union all
        select
            walked.batch_key,
            walked.target_key,
            walked.user_id,
            parent.id as line_id,
            parent.parent_line_id,
            walked.depth + 1 as depth
        from walked
        inner join line as parent
            on parent.id = walked.parent_line_id
        -- a cycle in the lines ends here (no chain is longer than the table)
        where walked.depth < (select count(*) from line)
    ),

    nearest as (
        select
            line_id,
            target_key,
            min(depth) as depth
        from walked
        group by line_id, target_key
    )

    select
        walked.line_id,
        walked.target_key,
        min(walked.user_id) as user_id,
        min(walked.batch_key) as batch_key
    from walked
    inner join nearest
        on
            nearest.line_id = walked.line_id
            and nearest.target_key = walked.target_key
            and nearest.depth = walked.depth
    where
        not exists (
            select 1
            from memory_extracted_line as recorded
            where
                recorded.line_id = walked.line_id
                and recorded.target_key = walked.target_key
        )
    group by walked.line_id, walked.target_key
    returning line_id
{%- endmacro %}
