"""Helpers for tests and offline demos, not the library's runtime: a scripted LLM
(`scripted_llm`) and the demo data (`demo_data`). What only the tests and benchmarks use is not
shipped: tests/python/ (the Citus cluster, synthetic dialogue)."""
