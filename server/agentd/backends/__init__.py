"""Server cache backends that need an external service (the in-memory one is agentd.runtime.cache).

Each lives in its own module, imported only when configured, so its client
library is loaded only by servers that use it.
"""
