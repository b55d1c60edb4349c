{#
    The answer of a character recall batch (the Python wrapper's select over the marts), one
    row per request in request_id order: the three blocks, the template filled (`prompts`:
    only when a request of the batch brings one, else null columns; the prompts mart carries
    the blocks too, so they are computed once), every entry's explain row (`explain`: only when
    a request asks, a row per entry), the updated queue and the words, each list one column
    as the engine aggregates objects.
#}
{% macro character_recall_answer(explain, prompts) -%}
    {%- set lists = [
        ('queue', 'int_recall_queue_updated', list_of_objects(
            [('entry_key', 'queue.entry_key'), ('recalled_turn', 'queue.recalled_turn'),
                ('match_quality', 'queue.match_quality')], 'queue.entry_key')),
        ('words', 'int_recall_words_expanded', list_of_objects(
            [('word', 'words.word'), ('word_source', 'words.word_source'),
                ('level', 'words.level')], 'words.word_order')),
    ] + ([('explained', 'character_memory_recall', list_of_rows('explained',
        'explained.entry_key'))] if explain else []) -%}
select
    requests.request_id,
    blocks.attributes_text,
    blocks.events_text,
    blocks.dialogue_style_text,
    {%- for name in ('system_prompt', 'prompt_before_dynamic', 'prompt_after_dynamic') %}
    {% if prompts %}blocks.{{ name }}{% else %}cast(null as varchar) as {{ name }}{% endif %},
    {%- endfor %}
    {% if explain %}explained.explained{% else %}cast(null as integer[]){% endif %} as explain,
    queue.queue,
    words.words
from int_recall_requests as requests
left join {{ 'character_memory_prompts' if prompts else 'character_memory_blocks' }} as blocks
    on requests.request_id = blocks.request_id
{%- for name, model, rows in lists %}
left join (
    select
        {{ name }}.request_id,
        {{ rows }} as {{ name }}
    from {{ model }} as {{ name }}
    group by {{ name }}.request_id
) as {{ name }} on requests.request_id = {{ name }}.request_id
{%- endfor %}
order by requests.request_id
{%- endmacro %}
