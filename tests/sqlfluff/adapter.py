"""sqlfluff's stand-in for dbt's `adapter` when it lints the models with the jinja templater:
a dispatched macro renders as `null` (a join for the macros written where a join goes, a
select for those written where a query goes), so the SQL around it is still linted. (The
macros' own SQL is linted after rolemem renders it: tests/python/test_macros.py.)"""

# dispatched macros that stand where a join goes, not an expression
_JOINS = {"filter_join"}
# dispatched macros that are a whole query
_SELECTS = {"newest_events_per_query"}


def dispatch(name, package=None):
    if name in _JOINS:
        stand_in = "cross join (select 1 as one) as linted"
    elif name in _SELECTS:
        stand_in = "select 1 as linted"
    else:
        stand_in = "null"
    return lambda *args, **kwargs: stand_in
