{#
    The empty table of the character library's cached unlock verdicts (the rows of model
    int_recall_context_verdicts per character and context), in its private database.
#}
{% macro create_verdict_cache(relation) -%}
    create table {{ relation }} (
        character_id varchar,
        context_signature varchar,
        entry_key varchar,
        is_unlocked boolean,
        failed_condition varchar
    )
{%- endmacro %}
