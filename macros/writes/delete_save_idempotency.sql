{#
    The idempotency records whose answer names one of the saves $save_ids (its save_id),
    deleted with them: a request replayed after its save is erased runs again, and is not
    found, instead of answering as if the save were there. One row answered per record; on
    Citus the player $user_id's (one shard).
#}
{% macro delete_save_idempotency() -%}
    delete from rolemem_idempotency
    where
        {{ player_filter('rolemem_idempotency.user_id') }}
        and cast({{ json_field_text('rolemem_idempotency.response', 'save_id') }} as bigint)
        in (select unnest(cast($save_ids as bigint[])))
    returning 1
{%- endmacro %}
