"""Celery only: the apps, tasks, publisher, time limits, outcomes and the embedded broker."""
