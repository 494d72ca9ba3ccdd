"""The data behind each page, one module per page (``overview``, ``radar``, ``breakdowns``,
``agreement``, ``samples``, ``annotate``, ``rejudge``), each with its SQL beside it; shared
engines: ``cells`` (means with CIs for any grouping), ``scorers``, ``queues``; ``ceiling`` holds
the agreement page's leave-one-out human ceiling. Pages call these through
``pages.common.cached``; the CLI calls the same functions."""
