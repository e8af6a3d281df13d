"""One review job, from the pull request read to the review posted and the check run completed."""
