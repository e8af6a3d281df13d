"""The Celery side and the review job, in process."""
