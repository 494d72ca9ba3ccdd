"""LLM-as-judge: prompts, parsing, backends and the runner (never imports streamlit)."""
