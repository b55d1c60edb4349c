"""Test helpers, not the library's runtime: a scripted LLM (`scripted_llm`), synthetic
dialogue (`synthetic_dialogue`) and the demo data (`demo_data`)."""
