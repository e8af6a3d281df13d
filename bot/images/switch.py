"""Whether a review shows K3 images, and within which limits: ``KIMI_IMAGES=0`` (the
deployment's word: a server without the vision tower) and ``[review] images`` turn them
off; the hook sends them only with ``[review] images_in_hook``."""

from __future__ import annotations

import os
from collections.abc import Mapping

from bot.domain.images import ChangeImages
from bot.settings.environment import env_bool
from bot.settings.repository import Config


def images_on(env: Mapping[str, str] | None = None) -> bool:
    """Whether the deployment takes images (``KIMI_IMAGES``, on unless ``0``)."""
    return env_bool(os.environ if env is None else env, "KIMI_IMAGES", True)


def images_for(
    config: Config, env: Mapping[str, str] | None = None, *, hook: bool = False
) -> ChangeImages | None:
    """The (empty) images of a review under ``config``; None when images are off."""
    settings = config.review
    if not images_on(env) or not settings.images or (hook and not settings.images_in_hook):
        return None
    return ChangeImages(
        max_images=max(0, settings.images_max), max_bytes=max(0, settings.image_max_bytes)
    )
