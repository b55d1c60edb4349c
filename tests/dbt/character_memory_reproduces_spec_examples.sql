-- The batch path renders the spec's three examples exactly (demo_recall_requests 1-3):
-- attributes for request 1, events for request 2, dialogue styles for request 3.
with

blocks as (
    select * from {{ ref('character_memory_blocks') }}
),

expected as (
    select
        1 as request_id, 'attributes' as block,
        '能力特征：艺术天赋、创作出独特的变色画作' || chr(10) || '性格特征：温柔、内心温柔' as text
    union all
    select
        2, 'events',
        '身世：' || chr(10) || '-数百年前，在人类世界建立了第一间画廊，开始收集美好的画作' || chr(10)
        || chr(10)
        || '相遇：' || chr(10) || '-2024-01-20，在画廊偶遇闯入禁区的{' || '{user}}，被她对画作的独特见解吸引'
        || chr(10) || '-为了保护{' || '{user}}，主动请缨成为她的保镖，开始了双重身份的生活' || chr(10)
    union all
    select
        3, 'dialogue_style',
        '-被你发现我的小心思了呢，这幅画可是为你准备的' || chr(10)
        || '-谢谢你的夸奖，不过比起画作，我更想听听你的想法' || chr(10)
        || '-这幅画的灵感来自于你的笑容，所以才会这么美' || chr(10)
),

actual as (
    select request_id, 'attributes' as block, attributes_text as text from blocks
    union all
    select request_id, 'events', events_text from blocks
    union all
    select request_id, 'dialogue_style', dialogue_style_text from blocks
),

final as (
    select expected.*, actual.text as actual_text
    from expected
    left join actual
        on actual.request_id = expected.request_id and actual.block = expected.block
    where actual.text is distinct from expected.text
)

select * from final
