"""The App's Celery side: settings, the Celery app and tasks, the schedule, shared state."""
