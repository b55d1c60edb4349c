with

steps as (
    select * from {{ ref('int_lines_walked_to_root') }}
),

problems as (
    select * from {{ ref('int_save_chain_problems') }}
),

lines as (
    select * from {{ ref('stg_app__lines') }}
),

roles as (
    select * from {{ ref('stg_app__roles') }}
),

healthy_steps as (
    select steps.*
    from steps
    left join problems
        on problems.save_id = steps.save_id
    where problems.save_id is null
),

chain_lengths as (
    select
        save_id,
        max(depth) as max_depth
    from healthy_steps
    group by save_id
),

final as (
    select
        healthy_steps.save_id,
        chain_lengths.max_depth - healthy_steps.depth as line_position,
        lines.line_id,
        lines.role_id,
        lines.script_role_id,
        lines.attribute,
        lines.display_name,
        lines.content,
        lines.original_emotion,
        lines.tts_content,
        lines.action_content,
        lines.created_at,
        lines.scene,
        -- who was present: what the line says, else what the chain said last
        {% if var('history_presence', true) %}
            {{ inherited_presence(
                'lines.present_role_ids',
                'lines.present_script_role_ids',
                'chain_lengths.max_depth - healthy_steps.depth',
                'healthy_steps.save_id'
            ) }},
        {% else %}
            -- var history_presence false: no line of the chains says who was present (a
            -- caller that read them: the history's append), so nobody's presence is known
            cast(null as varchar) as present_role_ids,
            cast(null as varchar) as present_script_role_ids,
        {% endif %}
        -- names a line that shows none (the role's name, when the line has a role)
        roles.role_name
    from healthy_steps
    inner join chain_lengths
        on chain_lengths.save_id = healthy_steps.save_id
    inner join lines
        on lines.line_id = healthy_steps.line_id
    left join roles
        on roles.role_id = lines.role_id
)

select * from final
