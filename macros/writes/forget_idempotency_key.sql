{#
    A key's record once it expired, so the key may be used again (on Citus, on the shard of
    the record's player $user_id: macro player_filter).
#}
{% macro forget_idempotency_key() -%}
    delete from rolemem_idempotency
    where key = $key and created_at < $expired and {{ player_filter('user_id') }}
{%- endmacro %}
