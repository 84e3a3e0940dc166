"""Skills (SEP-2640), server side: publish a directory of Agent Skills.

`SkillsDirectory` publishes a directory of Agent Skills (`Server.skills`); `mcpio.skills.format`
and `mcpio.skills.scan` are what it is made of, and `mcpio.client._skills` is the host side.
"""

from mcpio.skills.provider import SkillsDirectory

__all__ = ["SkillsDirectory"]
