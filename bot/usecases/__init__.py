"""What the App's worker, the Action and `review --pr` all run; no Celery, no Flask."""
