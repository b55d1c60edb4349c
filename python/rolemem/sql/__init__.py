"""The SQL runner: the dbt project's models rendered and composed for a request (`project`),
its seeds as the package reads them (`seeds`), request rows bound as parameters
(`request_rows`), micro-batching (`batching`) and cancellation (`cancel`). It knows no
capability."""
