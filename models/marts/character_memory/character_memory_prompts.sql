-- One row per recall request that brings a prompt template (the character's system line): the
-- template filled once with the three blocks and the names. A template that places none of
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

-- U+F8FF marks the dynamic memory's place: no value keeps it
labelled as (
    select
        blocks.request_id,
        {{ label_memory_blocks('requests.template') }} as template,
        replace(blocks.attributes_text, chr(63743), '') as attributes_text,
        replace(blocks.events_text, chr(63743), '') as events_text,
        replace(blocks.dialogue_style_text, chr(63743), '') as dialogue_style_text,
        replace(requests.user_name, chr(63743), '') as user_name,
        replace(requests.char_name, chr(63743), '') as char_name
    from requests
    inner join blocks
        on blocks.request_id = requests.request_id
    where requests.template is not null
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

filled as (
    select
        request_id,
        {{ tidy_prompt_lines(fill_prompt_template(
            'template',
            blocks_and_names + [(memory_placeholder('dynamic_memory'), 'chr(63743)')] + names
        )) }} as marked_prompt,
        {{ tidy_prompt_lines(fill_prompt_template(
            'template', blocks_and_names + [(memory_placeholder('dynamic_memory'), "''")] + names
        )) }} as system_prompt
    from labelled
),

final as (
    select
        request_id,
        system_prompt,
        case
            when strpos(marked_prompt, chr(63743)) > 0
                then left(marked_prompt, strpos(marked_prompt, chr(63743)) - 1)
        end as prompt_before_dynamic,
        -- the first place only: the memory is told once
        case
            when strpos(marked_prompt, chr(63743)) > 0
                then
                    replace(
                        substr(marked_prompt, strpos(marked_prompt, chr(63743)) + 1),
                        chr(63743),
                        ''
                    )
        end as prompt_after_dynamic
    from filled
)

select * from final
