"""The pre-commit hook: one staged review, its policy, its cache."""
