"""`gitneural replay`: past changes reviewed as the App would have, nothing posted, and scored.

The findings are judged against golden items: later fixes of the lines a change added, a
golden file, or the pull requests' human review comments.
"""
