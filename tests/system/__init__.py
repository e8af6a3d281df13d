"""The App end to end: real processes, faults injected over sockets, bursts, secrets and
tenants."""
