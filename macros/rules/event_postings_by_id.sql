{#
    The BM25 postings of the events $ids (model int_memory_event_terms_with_official), in the
    column order the recall's postings cache reads them.
#}
{% macro event_postings_by_id() -%}
    select
        event_id,
        term,
        keyword_count,
        description_count,
        tag_count
    from int_memory_event_terms_with_official
    where event_id in (select unnest(cast($ids as bigint[])))
{%- endmacro %}
