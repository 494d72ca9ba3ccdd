"""Finegrain's non-UI layer, in folders by role (each one only imports the ones below it):

- ``cli``: the ``finegrain`` command (``python -m analysis``), on top of everything.
- ``charts``: plotly figures, one module per page; they draw a view's result, no queries.
- ``views``: the data behind each page, one module per page, its SQL beside it.
- (``judges``, a sibling package: LLM-as-judge, standing on ``core`` only.)
- ``ingest``: data in (FLASK folders and URLs, score files, the simulated demo).
- ``stats``: pure numpy/scipy statistics: no store, no I/O.
- ``core``: the store, its schema, the one batch writer, errors, taxonomy, filters.

Never imports streamlit; the layers are import-linter contracts in pyproject.toml, checked by
tests/test_layers.py.
"""
