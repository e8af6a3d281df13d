"""What many tests share: real git repositories, webhook deliveries, GitNeural processes,
the planted bug, the review-job world and the fault checks, the burst rig."""
