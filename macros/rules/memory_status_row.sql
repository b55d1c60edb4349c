{#
    The stored part of memory_status for the save $save_id x character $target_key: its loop
    state, its newest extraction batch and the last maintenance run over the player $user_id's
    memories of $agent_id, in one statement (one snapshot: the batch and the state it cleared
    are read together). One row whether any is stored or not (the maintenance aggregate's). On
    Citus each read names the save's player $user_id (macro player_filter): one shard.
#}
{% macro memory_status_row() -%}
    with last_maintenance as (
        select max(ran_at) as last_maintained_at
        from memory_maintenance_run
        where user_id = $user_id and agent_id = $agent_id
    ),

    loop_state as (
        select last_observed_at, last_error, last_error_at, failed_attempts, next_attempt_at
        from memory_loop_state
        where
            save_id = $save_id
            and target_key = $target_key
            and {{ player_filter('user_id') }}
    ),

    last_batch as (
        select batch_key, extracted_at
        from memory_extraction_batch
        where
            save_id = $save_id
            and target_key = $target_key
            and {{ player_filter('user_id') }}
        order by extracted_at desc, last_line_id desc
        limit 1
    )

    select
        loop_state.last_observed_at,
        loop_state.last_error,
        loop_state.last_error_at,
        coalesce(loop_state.failed_attempts, 0) as failed_attempts,
        loop_state.next_attempt_at,
        last_batch.batch_key as last_batch_key,
        last_batch.extracted_at as last_extracted_at,
        last_maintenance.last_maintained_at
    from last_maintenance
    left join loop_state on true
    left join last_batch on true
{%- endmacro %}
