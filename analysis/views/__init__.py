"""The data behind each page, one module per page (``overview``, ``radar``, ``breakdowns``,
``agreement``, ``samples``, ``annotate``, ``rejudge``), each with its SQL beside it; shared
engines: ``cells`` (means with CIs for any grouping), ``scorers``, ``queues``. Pages call these
through ``pages.common.cached``; the CLI calls the same functions."""
