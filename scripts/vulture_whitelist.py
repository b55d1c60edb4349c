# What `vulture python/rolemem scripts/vulture_whitelist.py --min-confidence 80` reports that
# is not dead, one line each with why (scripts/test.sh runs it).

# sql/project.py _Adapter.dispatch(name, package): dbt's signature; the macros pass the
# package ('rolemem'), and one project has one package to look in
package  # unused variable (python/rolemem/sql/project.py:67)
