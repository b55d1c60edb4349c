-- One row per recall request: its three blocks (character_memory_blocks) and, when it brings a
-- prompt template (the character's system line), the template filled once with the three
-- blocks and the names (null without one). The recall statement reads the blocks from here
-- when a request brings a template, so they are computed once. A template that places none of
-- the blocks gets them at its end under their headers; an empty block takes its header with
-- it; blank lines go. The dynamic memory comes from its own statement, run at the same time:
-- the filled prompt is given as it reads without it, and as the text before and after the
-- place the template gives it ({{ "{{" }}dynamic_memory}}), where the turn puts that text.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

blocks as (
    select * from {{ ref('character_memory_blocks') }}
),

-- U+F8FF marks the dynamic memory's place, U+E001.. the fill's placeholders: no value keeps
-- them (cleared once here, so the fill reads the values as they are). The mark is written as
-- the character itself: a chr() call is one more expression to bind per statement.
{%- set dynamic_mark = "'" ~ ('%c' % 63743) ~ "'" %}
labelled as (
    select
        blocks.request_id,
        blocks.attributes_text as shown_attributes_text,
        blocks.events_text as shown_events_text,
        blocks.dialogue_style_text as shown_dialogue_style_text,
        {{ label_memory_blocks('requests.template') }} as template,
        {{ prompt_marks_removed('blocks.attributes_text') }} as attributes_text,
        {{ prompt_marks_removed('blocks.events_text') }} as events_text,
        {{ prompt_marks_removed('blocks.dialogue_style_text') }} as dialogue_style_text,
        {{ prompt_marks_removed('requests.user_name') }} as user_name,
        {{ prompt_marks_removed('requests.char_name') }} as char_name
    from requests
    inner join blocks
        on blocks.request_id = requests.request_id
),

{%- set blocks_and_names = [
    (memory_placeholder('character_memory_attributes'), 'attributes_text'),
    (memory_placeholder('character_memory_event'), 'events_text'),
    (memory_placeholder('character_dialogue_style'), 'dialogue_style_text'),
] %}
{%- set names = [
    (memory_placeholder('user'), 'user_name'),
    (memory_placeholder('char'), 'char_name'),
] %}

-- filled once, the dynamic memory's place marked; without it, the mark's line and a header
-- line directly above it go, as the fill drops an empty block's header
filled as (
    select
        request_id,
        shown_attributes_text,
        shown_events_text,
        shown_dialogue_style_text,
        {{ fill_prompt_template(
            'template',
            blocks_and_names + [(memory_placeholder('dynamic_memory'), dynamic_mark)] + names,
            values_unmarked=true
        ) }} as marked
    from labelled
),

prompts as (
    select
        request_id,
        shown_attributes_text,
        shown_events_text,
        shown_dialogue_style_text,
        {{ tidy_prompt_lines('marked') }} as marked_prompt,
        {{ tidy_prompt_lines(
            "replace(regexp_replace(marked, '(?m)^[ \\t]*(?:#[^\\n]*|[^\\n]*[】：:])[ \\t]*\\n[ \\t]*"
            ~ ('%c' % 63743) ~ "[ \\t]*$', '', 'g'), " ~ dynamic_mark ~ ", '')"
        ) }} as system_prompt
    from filled
),

final as (
    select
        request_id,
        shown_attributes_text as attributes_text,
        shown_events_text as events_text,
        shown_dialogue_style_text as dialogue_style_text,
        system_prompt,
        case
            when strpos(marked_prompt, {{ dynamic_mark }}) > 0
                then left(marked_prompt, strpos(marked_prompt, {{ dynamic_mark }}) - 1)
        end as prompt_before_dynamic,
        -- the first place only: the memory is told once
        case
            when strpos(marked_prompt, {{ dynamic_mark }}) > 0
                then
                    replace(
                        substr(marked_prompt, strpos(marked_prompt, {{ dynamic_mark }}) + 1),
                        {{ dynamic_mark }},
                        ''
                    )
        end as prompt_after_dynamic
    from prompts
)

select * from final
