{#
    Passes when no two rows share the same values in `columns` (a composite key).
    Written here instead of importing dbt_utils: `dbt deps` would need the network.
#}
{% test unique_combination(model, columns) %}
select
    {{ columns | join(', ') }},
    count(*) as row_count
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
