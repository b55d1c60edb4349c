-- One row per recall request: the three prompt blocks, rendered as the spec prints them.
with

requests as (
    select * from {{ ref('int_recall_requests') }}
),

shown as (
    select * from {{ ref('int_recall_entries_shown') }}
),

-- 类别：内容1、内容2、内容3, one line per category in designer order
attribute_lines as (
    select
        request_id,
        group_order,
        group_name || '：' || string_agg(content, '、' order by display_rank) as category_line
    from shown
    where entry_kind = 'attribute'
    group by request_id, group_name, group_order
),

attribute_blocks as (
    select
        request_id,
        string_agg(category_line, chr(10) order by group_order) as attributes_text
    from attribute_lines
    group by request_id
),

-- 类型：\n-日期，内容\n-内容\n per type (no comma without a date), types joined by \n
event_blocks_by_type as (
    select
        request_id,
        group_order,
        group_name || '：' || chr(10) || string_agg(
            '-' || case when coalesce(event_date, '') = '' then '' else event_date || '，' end
            || content || chr(10),
            '' order by display_rank
        ) as type_block
    from shown
    where entry_kind = 'event'
    group by request_id, group_name, group_order
),

event_blocks as (
    select
        request_id,
        string_agg(type_block, chr(10) order by group_order) as events_text
    from event_blocks_by_type
    group by request_id
),

-- -内容\n each, no type shown
style_blocks as (
    select
        request_id,
        string_agg('-' || content || chr(10), '' order by display_rank) as dialogue_style_text
    from shown
    where entry_kind = 'dialogue_style'
    group by request_id
),

assembled as (
    select
        requests.request_id,
        requests.character_id,
        requests.user_name,
        requests.char_name,
        coalesce(attribute_blocks.attributes_text, '') as attributes_text,
        coalesce(event_blocks.events_text, '') as events_text,
        coalesce(style_blocks.dialogue_style_text, '') as dialogue_style_text
    from requests
    left join attribute_blocks on attribute_blocks.request_id = requests.request_id
    left join event_blocks on event_blocks.request_id = requests.request_id
    left join style_blocks on style_blocks.request_id = requests.request_id
),

final as (
    select
        request_id,
        character_id,
        {{ fill_name_placeholders('attributes_text', 'user_name', 'char_name') }}
            as attributes_text,
        {{ fill_name_placeholders('events_text', 'user_name', 'char_name') }} as events_text,
        {{ fill_name_placeholders('dialogue_style_text', 'user_name', 'char_name') }}
            as dialogue_style_text
    from assembled
)

select * from final
