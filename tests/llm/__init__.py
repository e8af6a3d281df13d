"""The K3 client against the K3 stub."""
