"""Images a review shows K3: finding their links, the hosts that may be fetched, and
preparing the bytes (sniffed, downscaled, stripped of metadata) with Pillow, the ``images``
extra: without it none is fetched or sent."""
