"""Change notifications across instances through Redis (`RedisBus`), all sharing one state key.

MCPIO_STATE_KEY=<hex> python examples/redis_bus.py   # the tests import it (no Redis needed)
"""

import os

from mcpio import Server
from mcpio.server import RedisBus

KEY = bytes.fromhex(os.environ["MCPIO_STATE_KEY"])  # the same on every instance
server = Server("demo", "1.0", state_key=KEY, bus=RedisBus("redis://127.0.0.1:6379/0"))
