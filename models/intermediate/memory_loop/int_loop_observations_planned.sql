-- One row per observation: the loop's plan of it (what MemoryLoop.observe and due read). The
-- batches due, the watermark and the context window; the chain's lines from the first one
-- extraction may take (after the watermark, and replay lines before it), the context
-- window's, and the chain's first (it names the dialogue tree memories are extracted in),
-- each with whether the character witnessed it (macro is_witnessed: extraction sends it only
-- then; with var loop_presence false no line of the chain says who was present, so every
-- line was); and what the plan read (the tip, the save's batches, the lines extracted for
-- the character), so a context window can be reused while they stay the same.
{%- set presence = var('loop_presence', true) %}
{%- set batch_fields = [] %}
{%- for name in [
    'batch_index', 'reason', 'scene', 'batch_key', 'first_line_id', 'last_line_id',
    'first_line_position', 'last_line_position', 'turn_count', 'new_line_count',
    'replaced_line_ids', 'replaced_batch_keys',
] %}
    {%- do batch_fields.append((name, name)) %}
{%- endfor %}
{#- a chain line as the memory builder reads it (its presence is not read: applied here) #}
{%- set line_fields = [('line_position', 'chain.line_position'), ('id', 'chain.line_id')] %}
{%- for name in [
    'role_id', 'script_role_id', 'attribute', 'display_name', 'content', 'original_emotion',
    'tts_content', 'action_content', 'role_name', 'created_at',
] %}
    {%- do line_fields.append((name, 'chain.' ~ name)) %}
{%- endfor %}
{%- do line_fields.append((
    'is_witnessed',
    is_witnessed('chain', 'observed', 'witnesses') if presence else 'true',
)) %}
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

due as (
    select * from {{ ref('int_loop_batches_due') }}
),

watermarks as (
    select * from {{ ref('int_loop_watermarks') }}
),

windows as (
    select * from {{ ref('int_loop_context_windows') }}
),

chain as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

{% if presence %}
    witnesses as (
        select * from {{ ref('int_role_witnesses') }}
    ),
{% endif %}

tips as (
    select * from {{ ref('int_save_history_tips') }}
),

saves as (
    select * from {{ ref('stg_app__saves') }}
),

extraction_batches as (
    select * from {{ ref('stg_app__memory_extraction_batches') }}
),

extracted_lines as (
    select * from {{ ref('stg_app__memory_extracted_lines') }}
),

batches as (
    select
        save_id,
        target_key,
        {{ list_of_objects(batch_fields, 'batch_index') }} as batches
    from due
    group by save_id, target_key
),

-- the lines from the first pending one (what extraction takes: after the watermark, and
-- replay lines before it), those of the context window, and the chain's first
lines as (
    select
        observed.save_id,
        observed.target_key,
        {{ list_of_objects(line_fields, 'chain.line_position') }} as lines
    from observations as observed
    inner join chain
        on chain.save_id = observed.save_id
    {% if presence %}
        -- read by macro is_witnessed in the lines' objects
        left join witnesses -- noqa: ST11
            on witnesses.role_id = observed.target_role_id
    {% endif %}
    left join watermarks as marks
        on marks.save_id = observed.save_id and marks.target_key = observed.target_key
    left join windows as starts
        on starts.save_id = observed.save_id and starts.target_key = observed.target_key
    where
        chain.line_position >= least(
            marks.watermark_position + 1,
            starts.window_start_position,
            coalesce(starts.first_pending_position, marks.watermark_position + 1)
        )
        or chain.line_position = 0
    group by observed.save_id, observed.target_key
),

batch_marks as (
    select
        save_id,
        target_key,
        array_agg(last_line_id order by last_line_id) as batch_last_line_ids
    from extraction_batches
    group by save_id, target_key
),

extracted_counts as (
    select
        user_id,
        target_key,
        count(*) as extracted_line_count
    from extracted_lines
    group by user_id, target_key
),

final as (
    select
        observations.save_id,
        observations.target_key,
        observations.target_role_id,
        observations.target_script_role_id,
        batches.batches,
        coalesce(windows.pending_turns, 0) as pending_turns,
        watermarks.watermark_line_id,
        watermarks.watermark_position,
        observations.last_scene,
        windows.window_start_position,
        windows.window_turns,
        lines.lines,
        tips.chain_problem as problem,
        saves.save_id is not null as saves_found,
        saves.user_id as save_user_id,
        saves.user_name as save_user_name,
        tips.tip_line_id as chain_tip_line_id,
        batch_marks.batch_last_line_ids,
        coalesce(extracted_counts.extracted_line_count, 0) as extracted_line_count,
        -- the lean plan (vars loop_cuts and loop_presence false) holds only where no memory
        -- was cut off the chain and no line says who was present: else plan in full
        coalesce(watermarks.has_cut, false) as has_cut,
        coalesce(watermarks.has_presence, false) as has_presence
    from observations
    left join batches
        on batches.save_id = observations.save_id and batches.target_key = observations.target_key
    left join watermarks
        on
            watermarks.save_id = observations.save_id
            and watermarks.target_key = observations.target_key
    left join windows
        on windows.save_id = observations.save_id and windows.target_key = observations.target_key
    left join lines
        on lines.save_id = observations.save_id and lines.target_key = observations.target_key
    left join tips on tips.save_id = observations.save_id
    left join saves on saves.save_id = observations.save_id
    left join batch_marks
        on
            batch_marks.save_id = observations.save_id
            and batch_marks.target_key = observations.target_key
    left join extracted_counts
        on
            extracted_counts.user_id = observations.user_id
            and extracted_counts.target_key = observations.target_key
)

select * from final
