"""Git access with pygit2, read-only: the changes GitNeural reviews (``repo``) and views
of one version of a repository's files (``snapshots``, ``worktree``)."""
