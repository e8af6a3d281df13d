"""GitHub access (App auth, mirrors, posting) against the fake GitHub."""
