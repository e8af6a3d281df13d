"""GitHub through PyGithub and GraphQL, by subject: pull requests, reviews, check runs, threads."""
