"""Data in: FLASK folders and URLs, long-format score files, and the simulated demo. Parsers are
pure (file → ``Batch``); ``core.writer.write_batch`` is the only code that writes an import."""
