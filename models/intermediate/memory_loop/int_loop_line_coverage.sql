-- Per observed save x character: every line of its current chain after the opening (turn > 0)
-- and whether extraction still has to take it. A line is covered once it was sent for the
-- character, unless a memory citing it was cut off this chain (its last line is not on it: a
-- reload, a fork or a regenerated reply left it on another branch) while no memory shown
-- here cites it and no replacement batch shown here sent it again: such a line is a replay
-- line, sent again as a replacement batch. A line that yielded no memory, or whose memories
-- all stay shown, is never sent again; a deleted memory cites nothing (it never comes back).
-- With var loop_cuts false (a caller that found no batch cut on the chain: model
-- int_loop_watermarks, from batch_last_line_id), every line sent is covered, and the citations
-- are not planned. A line the character did
-- not witness (macro is_witnessed) is not its to extract: it has no row. With var
-- loop_presence false (a caller that found no line of the chain saying who was present:
-- says_presence) every line was witnessed, and presence is not planned.
{%- set cuts = var('loop_cuts', true) %}
{%- set presence = var('loop_presence', true) %}
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

extracted_lines as (
    select * from {{ ref('stg_app__memory_extracted_lines') }}
),

{% if presence %}
    witnesses as (
        select * from {{ ref('int_role_witnesses') }}
    ),
{% endif %}

{% if cuts %}
    citations as (
        select * from {{ ref('int_loop_line_citations') }}
    ),

    cited as (
        select
            save_id,
            target_key,
            line_id,
            -- a memory cut off the chain cites it, and neither a memory nor a replacement
            -- shown here
            bool_or(is_memory and not is_last_line_on_chain)
            and not bool_or(is_shown) as is_left_uncited
        from citations
        group by save_id, target_key, line_id
    ),
{% endif %}

final as (
    select
        observations.save_id,
        observations.target_key,
        turns.line_id,
        turns.line_position,
        turns.turn_number,
        turns.is_turn_start,
        turns.scene,
        extracted_lines.line_id is not null as is_extracted,
        {% if cuts %}
            -- cited by a memory cut off the chain, by nothing shown here
            extracted_lines.line_id is not null
            and coalesce(cited.is_left_uncited, false) as is_replay,
            extracted_lines.line_id is not null
            and not coalesce(cited.is_left_uncited, false) as is_covered,
        {% else %}
            false as is_replay,
            extracted_lines.line_id is not null as is_covered,
        {% endif %}
        -- the last line of the batch that sent it (a line it sent too): off this chain, a
        -- memory of the batch may be cut off
        extracted_lines.batch_last_line_id,
        -- the chain says who was present here: the plan must apply presence
        {{ says_presence('turns') }} as says_presence
    from observations
    inner join turns
        on turns.save_id = observations.save_id
    left join extracted_lines
        on
            extracted_lines.line_id = turns.line_id
            and extracted_lines.target_key = observations.target_key
    {% if cuts %}
        -- read by the select's is_replay and is_covered, in an if of their own
        left join cited -- noqa: ST11
            on
                cited.save_id = observations.save_id
                and cited.target_key = observations.target_key
                and cited.line_id = turns.line_id
    {% endif %}
    {% if presence %}
        left join witnesses
            on witnesses.role_id = observations.target_role_id
    {% endif %}
    where
        turns.turn_number > 0
        {% if presence %}
            and {{ is_witnessed('turns', 'observations', 'witnesses') }}
        {% endif %}
)

select * from final
