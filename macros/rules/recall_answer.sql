{#
    A recall batch's answer rows, one per query in query_id order, each a list per query (null
    where the batch plans none): its events, entities, prompt text, timeline, candidates and
    words, and how many facts on its chain a later one ended. `candidates`: a query logs or
    explains them (building ~thousands of dicts costs about a third of a query on a large
    store); `facts`: a player of the batch has facts (var recall_facts, else none of their
    models is planned); `prompt_text`: a query wants memory_prompt_texts; `entities`: the
    batch plans the entities; `words`: the statement computes the words (else the caller has
    them); `scored`: the events are every candidate with the fields its answer row shows (macro
    memory_event_fields, joined here rather than carried through the scoring models' windows:
    PostgreSQL's plan pays per candidate for each column carried), which the caller scores
    and selects, and no candidates; `hits`: the entities are every entity hit, which the
    caller gathers, with the lines the save sees each came from when `lines` (var
    recall_mention_lines); `only_entities`: the entity hits and the superseded facts alone,
    the statement a lone query runs beside the rest.
#}
{% macro recall_answer(
    candidates,
    facts,
    prompt_text,
    entities,
    words,
    scored,
    hits,
    lines,
    only_entities=false
) -%}
    {%- set listed = candidates and not scored -%}
    {%- set null_list = 'cast(null as integer[])' -%}
    {%- set candidate_rows -%}
        (
            select candidates.*, {{ memory_event_fields() }}
            from int_memory_event_candidates as candidates
            inner join int_memory_events_with_official as events
                on events.event_id = candidates.event_id
            inner join int_memory_queries as queries
                on queries.query_id = candidates.query_id
        )
    {%- endset -%}
    {%- set hit_rows -%}
        (
            select hits.*, sources.save_id, sources.line_ids
            from int_memory_entity_hits as hits
            left join int_memory_entity_mention_lines as sources
                on sources.query_id = hits.query_id and sources.entity_id = hits.entity_id
        )
    {%- endset -%}
    {%- if hits -%}
        {%- set entity_rows = [
            hit_rows if lines else 'int_memory_entity_hits', 'entities.entity_id'
        ] -%}
    {%- else -%}
        {%- set entity_rows = ['memory_query_entities', 'entities.result_index'] -%}
    {%- endif -%}
    {%- set events = [candidate_rows, 'events.event_id'] if scored
        else ['memory_query_events', 'events.result_index'] -%}
    {%- set word_fields = [('word', 'word'), ('word_source', 'word_source'), ('level', 'level')] -%}
    {#- each joined on the query: (name, relation, aggregate per query; none: one row each) -#}
    {%- set joins = (
        ([] if only_entities else [
            ('events', events[0], list_of_rows('events', events[1]))
        ])
        + ([
            ('entities', entity_rows[0], list_of_rows('entities', entity_rows[1]))
        ] if entities else [])
        + ([('prompts', 'memory_prompt_texts', none)] if prompt_text and not only_entities else [])
        + ([] if only_entities else [
            ('timeline', 'memory_query_timeline', list_of_rows('timeline', 'timeline.result_index'))
        ])
        + ([
            ('words', 'int_memory_query_words', list_of_objects(word_fields, 'word_order'))
        ] if words and not only_entities else [])
        + ([
            ('superseded', 'int_memory_facts_resolved', 'count(*) filter (where not is_current)')
        ] if facts else [])
        + ([
            (
                'candidates',
                'memory_recall_candidates',
                list_of_rows('candidates', 'candidates.score desc, candidates.event_id')
            )
        ] if listed and not only_entities else [])
    ) -%}
    select
        queries.query_id,
        {%- if only_entities %}
            entities.entities as entities,
        {%- else %}
            events.events as events,
            {{ 'entities.entities' if entities else null_list }} as entities,
            {{ 'prompts.prompt_text' if prompt_text else 'cast(null as varchar)' -}}
            {{ ' ' }}as prompt_text,
            timeline.timeline as timeline,
            {{ 'candidates.candidates' if listed else null_list }} as candidates,
            {{ 'words.words' if words else null_list }} as words,
        {%- endif %}
        {{ 'coalesce(superseded.superseded, 0)' if facts else '0' }} as superseded_fact_count
    from int_memory_queries as queries
    {%- for name, relation, aggregate in joins %}
        {%- if aggregate is none %}
        left join {{ relation }} as {{ name }} on queries.query_id = {{ name }}.query_id
        {%- else %}
        left join (
            select query_id, {{ aggregate }} as {{ name }}
            from {{ relation }} as {{ name }}
            group by query_id
        ) as {{ name }} on queries.query_id = {{ name }}.query_id
        {%- endif %}
    {%- endfor %}
    order by queries.query_id
{%- endmacro %}
