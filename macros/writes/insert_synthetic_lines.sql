{#
    The lines of $saves synthetic saves of $per_save lines, in one set-based insert (a
    million in seconds): three system lines open each save, then the player, two roles, a
    script NPC, a narrator and blank names mix by a hash of ($seed, line); every tenth line
    starts a regenerated branch, so each tree has dead siblings off the played chain
    (tests/python/synthetic_dialogue.py).
#}
{% macro insert_synthetic_lines() -%}
    insert into line (
        id, original_emotion, predicted_emotion, content, tts_content, action_content, audio_file,
        attribute, role_id, script_role_id, display_name, save_id, parent_line_id
    )
    with numbered as (
        select
            $first_line_id + line_numbers.line_number as line_id,
            $first_save_id + line_numbers.line_number // $per_save as save_id,
            line_numbers.line_number % $per_save as position,
            cast(hash(line_numbers.line_number, $seed) % 100 as integer) as roll,
            cast(hash(line_numbers.line_number, $seed, 'style') % 12 as integer) as style
        from range($saves * $per_save) as line_numbers (line_number)
    ),

    voiced as (
        select
            *,
            case
                when position < 3 then 'system'
                when roll < 30 or roll >= 93 then 'user'
                when roll < 90 then 'assistant'
                else 'system'
            end as attribute,
            case
                when position = 1 or (position >= 3 and roll < 55) then 1
                when position >= 3 and (roll between 55 and 69 or roll between 90 and 92) then 2
            end as role_id,
            case when position = 2 or (position >= 3 and roll between 70 and 79) then '1' end
                as script_role_id,
            case
                when position < 3 then null
                when roll < 30 then '莱姆'
                when roll < 55 then '钦灵'
                when roll < 70 then '莉莉'
                when roll < 80 then '白小喵'
                when roll < 90 then '旁白'
                when roll >= 93 then ' '
            end as display_name
        from numbered
    )

    select
        line_id as id,
        case
            when style % 3 = 0 then null
            else ['开心', '好奇', '难为情', '生气'][style % 4 + 1]
        end as original_emotion,
        null as predicted_emotion,
        '台词' || line_id || case when style = 7 then '，{带括号}' else '' end as content,
        case
            when attribute = 'assistant' and style % 2 = 0 then 'セリフ' || line_id
        end as tts_content,
        case
            when attribute = 'assistant' and style % 5 = 0 then '动作' || line_id
        end as action_content,
        null as audio_file,
        attribute,
        role_id,
        script_role_id,
        display_name,
        save_id,
        case
            when position = 0 then null
            when position % 10 = 5 then line_id - 2
            else line_id - 1
        end as parent_line_id
    from voiced
{%- endmacro %}
