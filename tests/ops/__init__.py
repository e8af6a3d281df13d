"""Operating the App: metrics, budgets and usage, readiness, the status page, the mirror
cache's cap, JSON logs."""
