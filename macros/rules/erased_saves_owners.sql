{#
    The players owning the saves $save_ids (ownerless saves have none).
#}
{% macro erased_saves_owners() -%}
    select distinct user_id from save
    where list_contains(cast($save_ids as bigint[]), id) and user_id is not null
{%- endmacro %}
