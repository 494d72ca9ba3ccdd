"""Finegrain's non-UI layer: store, importers, statistics, charts and the CLI.

Never imports streamlit (tests/test_layers.py checks it).
"""
