"""The `agentd` command (the console script): agentd.cli, loaded with the
cyclic garbage collector paused.

Start-up is almost all imports, and importing agentd's modules (and pydantic's,
grpc's) allocates without making garbage: the collector's some 130 passes over
that growing heap were a tenth of the time to SERVING. What the imports built
lives as long as the process, so it is frozen (out of every later pass) before
the collector runs again; `agentd serve` freezes what start-up built besides.
"""

import gc

gc.disable()
try:
    from agentd.cli import main
finally:
    gc.freeze()
    gc.enable()

__all__ = ["main"]
