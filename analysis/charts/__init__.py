"""Plotly figures, one module per page; each function takes a view's result and returns a
figure. No queries (an import-linter contract keeps it so)."""
