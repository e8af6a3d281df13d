"""Which review runs next, where, held by whom: lines per installation, claims and leases."""
