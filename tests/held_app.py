"""`agentd serve --app tests.held_app`: a server with the `held/...` test models
(see tests/support_models.py). Importing it registers them."""

from __future__ import annotations

from tests.support_models import HELD, held_model

from agentd.runtime import register_provider

register_provider(HELD, held_model)
