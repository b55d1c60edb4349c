"""sqlfluff's stand-in for dbt's `adapter` when it lints the models with the jinja templater:
a dispatched macro renders as `null` (a join for the macros written where a join goes), so
the SQL around it is still linted. (The macros' own SQL is linted where dbt compiles it; see
.sqlfluff.)"""

# dispatched macros that stand where a join goes, not an expression
_JOINS = {"filter_join"}


def dispatch(name, package=None):
    stand_in = "cross join (select 1 as one) as linted" if name in _JOINS else "null"
    return lambda *args, **kwargs: stand_in
