"""What runs under every route: settings, the store, the request guard, errors, idempotency,
extraction and webhook workers, readiness and warm-up, logs with request ids, metrics."""
