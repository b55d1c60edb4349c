"""What runs under every route: readiness and warm-up, logs with request ids, metrics."""
