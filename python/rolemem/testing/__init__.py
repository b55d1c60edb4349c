"""Test helpers, not the library's runtime: a scripted LLM (`scripted_llm`), synthetic
dialogue (`synthetic_dialogue`) and the demo data (`demo_data`). The Citus cluster the tests
start is not shipped: tests/python/citus_cluster.py."""
