"""What every other part stands on: the DuckDB store (short-lived connections, one transaction
per write), its schema, the one batch writer, the error hierarchy, FLASK's taxonomy and the
sidebar's filters (with the WHERE fragment every page query shares)."""
