{#
    Seed memory_time_question_words lowercased by the engine, as the models lowercase them: a
    recall batch whose texts hold none plans no test of which events name a time.
#}
{% macro time_question_words() -%}
    select lower(word) as word
    from memory_time_question_words
    where word is not null
{%- endmacro %}
