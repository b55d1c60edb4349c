{#
    The record kept for key $key (on Citus, on the shard of the record's player $user_id:
    macro player_filter): the request's hash and its first answer.
#}
{% macro seen_idempotency_key() -%}
    select request_hash, response from rolemem_idempotency
    where key = $key and {{ player_filter('user_id') }}
{%- endmacro %}
