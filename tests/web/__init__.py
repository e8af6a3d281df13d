"""The webhook server: signatures, deliveries, routing, hostile input."""
