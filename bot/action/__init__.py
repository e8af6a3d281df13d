"""`gitneural action`: a review inside a GitHub Actions job, on the App's router and use cases."""
