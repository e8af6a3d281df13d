"""The words every part of GitNeural speaks: the diff, the change under review, and what
a review finds. Below the core: config, git, the renderers and every entrance use them."""
