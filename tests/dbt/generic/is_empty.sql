{#
    Passes when the model has no rows; each row it has is printed as a failure.
    Used on problem/diagnostic models whose rows carry a readable message.
#}
{% test is_empty(model) %}
select * from {{ model }}
{% endtest %}
