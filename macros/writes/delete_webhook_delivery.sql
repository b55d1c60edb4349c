{#
    A kept webhook delivery that a replay delivered: nothing left to keep.
#}
{% macro delete_webhook_delivery() -%}
    delete from rolemem_webhook_delivery
    where event_id = $event_id and url = $url
{%- endmacro %}
