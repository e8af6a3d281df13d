"""The diff model, on real git repositories and on hostile input."""
