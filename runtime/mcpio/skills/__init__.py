"""Skills (SEP-2640), server side: publish a directory of Agent Skills.

`SkillsDirectory` publishes a directory of Agent Skills (`Server.skills`); the private `_format`
and `_scan` modules are what it is made of, and `mcpio.client.Skills` is the host side.
"""

from mcpio.skills._provider import SkillsDirectory

__all__ = ["SkillsDirectory"]
