"""The use cases run in process: a review job and a conversation job, against the fake
GitHub and the K3 stub."""
