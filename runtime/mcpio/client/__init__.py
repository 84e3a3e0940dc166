"""The client: `Client` for any target (a URL, a command, a `Server`) and what builds on it.

Here are its callbacks' types, and composition on top of it: `proxy_server` (a server that
re-serves another) and `from_config` (one client for a whole `mcpServers` file); `Skills` loads
a server's skills as a host.
"""

from mcpio.client._client import (
    Client,
    Elicitation,
    ElicitationUrl,
    LogHandler,
    Notice,
    Progress,
    Roots,
    Sampling,
    Subscription,
)
from mcpio.client._config import from_config
from mcpio.client._proxy import proxy_server
from mcpio.client._skills import LoadedSkill, SkillError, Skills, SkillVerificationError

__all__ = [
    "Client",
    "LoadedSkill",
    "SkillError",
    "SkillVerificationError",
    "Skills",
    "Elicitation",
    "ElicitationUrl",
    "LogHandler",
    "Notice",
    "Progress",
    "Roots",
    "Sampling",
    "Subscription",
    "from_config",
    "proxy_server",
]
