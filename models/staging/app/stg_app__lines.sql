with

source as (
    select * from {{ source('app', 'line') }}
),

renamed as (
    select
        id as line_id,
        save_id,
        parent_line_id,
        role_id,
        -- compared as text whatever the application stored
        cast(script_role_id as varchar) as script_role_id,
        attribute,
        display_name,
        content,
        original_emotion,
        predicted_emotion,
        tts_content,
        action_content,
        audio_file,
        created_at,
        scene,
        -- JSON lists, read as text on every engine (macro is_witnessed parses them); a
        -- JSON null (what an ORM may write for none) says nothing, as SQL null does
        nullif(cast(present_role_ids as varchar), 'null') as present_role_ids,
        nullif(cast(present_script_role_ids as varchar), 'null') as present_script_role_ids
    from source
)

select * from renamed
