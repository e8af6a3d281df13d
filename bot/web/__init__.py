"""The webhook's Flask app: signatures, the delivery log, routing, operations pages."""
