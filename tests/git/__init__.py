"""Git access and snapshots on real repositories."""
