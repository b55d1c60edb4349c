"""Test helpers, not the library's runtime: a scripted LLM (`scripted_llm`), synthetic
dialogue (`synthetic_dialogue`), the demo data (`demo_data`) and a Citus cluster built from the
vendored source (`citus`)."""
