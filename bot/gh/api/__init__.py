"""The connection to GitHub: credentials, installation tokens, clients, retries, error text."""
