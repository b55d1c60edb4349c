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
        scene
    from source
)

select * from renamed
