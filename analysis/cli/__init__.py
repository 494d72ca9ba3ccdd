"""The ``finegrain`` command (also ``python -m analysis``): the same numbers as the pages."""
