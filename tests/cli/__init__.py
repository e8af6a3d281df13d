"""``gitneural review`` end to end."""
