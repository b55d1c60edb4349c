{#
    Passes when every value of the column is an operator rolemem understands: the list of macro
    query_param_operators, which the config import's validation and the evaluation read too,
    so the test never disagrees with what an import accepts.
#}
{% test is_query_param_operator(model, column_name) %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} not in {{ query_param_operators() }}
{% endtest %}
