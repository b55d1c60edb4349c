{#
    The rows of `table` of the characters a batch of observations plans (int_loop_observations'
    target keys): on the observations' saves (`key` save_id, $save_id) or of their players
    (`key` user_id, $user_id). On Citus of the batch's player $save_user_id (macro
    player_filter), so the plan runs on that player's shard.
#}
{% macro loop_target_rows(table, key) -%}
    {%- set kind = 'bigint' if key == 'save_id' else 'varchar' -%}
    select * from {{ table }}
    where
        list_contains(cast(${{ key }} as {{ kind }}[]), {{ key }})
        and {{ player_filter('user_id', 'save_user_id') }}
        and target_key in (select observed.target_key from int_loop_observations as observed)
{%- endmacro %}
